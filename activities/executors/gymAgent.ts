import { ConfigError } from '../../contracts/errors';
import type { MaterializedRow } from '../../gym/schemas';
import { postJson, RequestFailure } from '../http/client';
import { endpointLimiter } from '../http/endpointLimiter';
import { agentReportedFailure, keyedResult, type RolloutExecutor } from './types';

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
}

/**
 * `gym_agent`: the row goes to a NeMo Gym agent's POST /run, which runs the model ↔ tool loop and
 * verifies. Like ng_collect_rollouts (run_examples posts to `row["agent_ref"]["name"]`), the agent is
 * chosen per row, so one file may mix agents; each agent gets its own per-worker request cap.
 */
export function gymAgentExecutor(opts: GymAgentOptions): RolloutExecutor {
  const endpoints = new Map<string, { url: string; limiter: ReturnType<typeof endpointLimiter> }>();
  function endpointFor(name: string) {
    let endpoint = endpoints.get(name);
    if (!endpoint) {
      const base = opts.agentUrls.get(name);
      // Materialization refuses unknown names, so this means the servers changed under a running stage.
      if (!base) throw new ConfigError(`agent_ref.name "${name}" is no longer served (known: ${[...opts.agentUrls.keys()].join(', ')})`);
      const url = new URL('/run', base).toString();
      endpoint = { url, limiter: endpointLimiter(url, opts.maxConcurrency) };
      endpoints.set(name, endpoint);
    }
    return endpoint;
  }
  return {
    async run(row: MaterializedRow, signal: AbortSignal) {
      const { url, limiter } = endpointFor(opts.agentName ?? row.agent_ref.name);
      const result = await limiter.run(() =>
        postJson(url, row, { timeoutMs: opts.timeoutMs, signal, connections: opts.maxConcurrency }),
      );
      if (!result || typeof result !== 'object' || Array.isArray(result)) {
        throw new RequestFailure('invalid_response', `${url} returned a result that is not a JSON object`, true);
      }
      const keyed = keyedResult(row, result as Record<string, unknown>);
      // Checked before the shape: a failure report need not carry a usable response.
      const reported = agentReportedFailure(keyed, url);
      if (reported) throw reported;
      if (!('response' in result)) throw new RequestFailure('invalid_response', `${url} returned a result without "response"`, true);
      return keyed;
    },
  };
}
