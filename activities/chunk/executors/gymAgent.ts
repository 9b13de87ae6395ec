import { ConfigError } from '../../../contracts/errors';
import type { DispatchGate } from '../../../gym/dispatchBudget';
import { parseKinded, type JsonDict, type KindedJson } from '../../../gym/kindedJson';
import { splicedRollout, type SplicedRollout } from '../../../gym/rolloutSplice';
import { postJsonText, RequestFailure } from '../../http/client';
import { endpointLimiter } from '../../http/endpointLimiter';
import { timed } from '../../http/timed';
import { shardLine, splicedShardLine } from '../shardLines';
import { invalidJudgeResponse } from './invalidJudge';
import {
  agentReportedFailure,
  DispatchDrained,
  keyedResult,
  type MaterializedInput,
  type RolloutExecutor,
} from './types';

export interface GymAgentOptions {
  /** Agent name → base URL; each row goes to the agent its own `agent_ref.name` names. */
  agentUrls: ReadonlyMap<string, string>;
  /**
   * Sends every row to this agent instead: local profiling's pivots name the agent they will be
   * published for, while the one that verifies them here is whichever the user serves.
   */
  agentName?: string;
  timeoutMs: number;
  maxConcurrency: number;
  /** Where this executor's requests queue at each endpoint's cap: lower ranks are served first. */
  rank?: number;
  /** Told when each request was in flight (from leaving the queue to its answer), for the engine timeline. */
  onRequest?: (startMs: number, endMs: number) => void;
  /** NeMo Gym 0.7.0's `retry_terminal_timeouts`: which failures the agent stamps terminal are retried. */
  retryTerminalTimeouts?: boolean;
  /** NeMo Gym 0.7.0's `retry_invalid_judge_responses`: an invalid judge response is a failed attempt. */
  retryInvalidJudgeResponses?: boolean;
  /** The collection time budget, asked once a request has its slot at the endpoint cap, as 0.7.0 asks. */
  gate?: DispatchGate;
}

/** A top-level key the invalid-judge option decides on, so such an answer is decoded rather than spliced. */
const INVALID_JUDGE_KEYS: ReadonlySet<string> = new Set(['invalid_judge_response']);

/**
 * `gym_agent`: the row goes to a NeMo Gym agent's POST /run, which runs the model ↔ tool loop and
 * verifies. Like ng_collect_rollouts (run_examples posts to `row["agent_ref"]["name"]`), the agent is
 * chosen per row, so one file may mix agents; each agent gets its own per-worker request cap. The
 * body is the materialized line itself, the bytes NeMo Gym posts, and the result keeps the number
 * kinds of the agent's answer, as NeMo Gym's `orjson.loads` does.
 */
export function gymAgentExecutor(opts: GymAgentOptions): RolloutExecutor {
  const endpoints = new Map<string, { url: string; limiter: ReturnType<typeof endpointLimiter> }>();
  function endpointFor(name: string) {
    let endpoint = endpoints.get(name);
    if (!endpoint) {
      const base = opts.agentUrls.get(name);
      // Materialization refuses unknown names, so this means the servers changed under a running stage.
      if (!base)
        throw new ConfigError(
          `agent_ref.name "${name}" is no longer served (known: ${[...opts.agentUrls.keys()].join(', ')})`,
        );
      const url = new URL('/run', base).toString();
      endpoint = { url, limiter: endpointLimiter(url, opts.maxConcurrency) };
      endpoints.set(name, endpoint);
    }
    return endpoint;
  }
  return {
    async run(input: MaterializedInput, signal: AbortSignal) {
      const { url, limiter } = endpointFor(opts.agentName ?? input.agentName);
      const { keys } = input;
      // An answer already in orjson's form is written as its bytes with the row's keys spliced in;
      // any other is decoded and written again, as NeMo Gym's orjson round trip would write it.
      const parse = (text: string): SplicedRollout | KindedJson =>
        (keys && splicedRollout(text, keys, opts.retryInvalidJudgeResponses ? INVALID_JUDGE_KEYS : undefined)) ||
        parseKinded(text);
      const post = () =>
        timed(opts.onRequest, () =>
          postJsonText(url, input.text, {
            timeoutMs: opts.timeoutMs,
            signal,
            connections: opts.maxConcurrency,
            parse,
          }),
        );
      const answer = (await limiter.run(() => (opts.gate ? gatedPost(opts.gate, post) : post()), opts.rank)) as
        SplicedRollout | KindedJson;
      if ('line' in answer) return splicedShardLine(answer.digest, answer.line);
      const { plain: result, kinded } = answer;
      if (!result || typeof result !== 'object' || Array.isArray(result)) {
        throw new RequestFailure('invalid_response', `${url} returned a result that is not a JSON object`, true);
      }
      const keyed = keyedResult(input, kinded as JsonDict);
      // Checked before the shape: a failure report need not carry a usable response.
      const reported = agentReportedFailure(
        result as Record<string, unknown>,
        keyed,
        url,
        opts.retryTerminalTimeouts ?? false,
      );
      if (reported) throw reported;
      if (!('response' in result))
        throw new RequestFailure('invalid_response', `${url} returned a result without "response"`, true);
      const invalidJudge = opts.retryInvalidJudgeResponses ? await invalidJudgeResponse(keyed, url) : undefined;
      if (invalidJudge) throw invalidJudge;
      return shardLine(keyed);
    },
  };
}

/** Starts the request only while the budget lets it, and tells the budget how long an answered one took. */
async function gatedPost<T>(gate: DispatchGate, post: () => Promise<T>): Promise<T> {
  if (!gate.mayStart()) throw new DispatchDrained();
  const started = performance.now();
  const answer = await post();
  gate.record((performance.now() - started) / 1000);
  return answer;
}
