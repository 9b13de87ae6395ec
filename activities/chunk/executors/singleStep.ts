import {
  ChatConversionError,
  chatCompletionToResponse,
  responsesEngineRequest,
  responsesRequestToChat,
} from '../../../gym/chatCompletions';
import { dictGet, parseKinded, toPy, withEntries, type JsonDict, type KindedJson } from '../../../gym/kindedJson';
import type { PyValue } from '../../../gym/pythonJson';
import { orjsonDumps } from '../../../gym/pythonJsonDumps';
import { expectedActionSchema } from '../../../gym/schemas';
import { verifyResponse, type ToolCallComparatorConfig } from '../../../gym/verifier';
import { postJsonText, RequestFailure } from '../../http/client';
import { modelEndpoint } from '../../http/replicas';
import { timed } from '../../http/timed';
import { shardLine } from '../shardLines';
import { keyedResult, type MaterializedInput, type RolloutExecutor } from './types';

export interface SingleStepOptions {
  /** A base URL, or the base URLs of the engine's replicas. */
  modelUrl: string | readonly string[];
  api: 'responses' | 'chat_completions';
  model?: string;
  apiKey?: string;
  timeoutMs: number;
  maxConcurrency: number;
  comparatorConfig: ToolCallComparatorConfig;
  /** Responses API: send `metadata.extra_body` keys (the per-repeat seed) as top-level fields too. */
  unpackExtraBody?: boolean;
  /** Where this executor's calls queue at the model's cap: lower ranks are served first. */
  rank?: number;
  /** Told when each call was in flight (from leaving the queue to its answer), for the engine timeline. */
  onRequest?: (startMs: number, endMs: number) => void;
}

/** What a sample adds to its materialized row, in this order; the rest of its line is the row. */
export const SINGLE_STEP_VERDICT_KEYS = ['response', 'reward', 'category'] as const;
type SingleStepVerdictKey = (typeof SINGLE_STEP_VERDICT_KEYS)[number];

/**
 * `single_step`: one policy call on the pivot's exact prefix, scored by the built-in port of NeMo
 * Gym's argument-comparison verifier. This is local profiling: no tools run, because the pivot asks
 * only whether the policy's next action matches `expected_action`.
 */
export function singleStepExecutor(opts: SingleStepOptions): RolloutExecutor {
  const path = opts.api === 'responses' ? '/v1/responses' : '/v1/chat/completions';
  const endpoint = modelEndpoint(opts.modelUrl, path, opts.maxConcurrency);
  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};

  type ModelResponse = Record<string, unknown> & { output: unknown[] };

  /** The response to verify, and the same with the number kinds of the engine's answer, to write. */
  async function callModel(
    params: Record<string, unknown>,
    kindedParams: JsonDict,
    session: string,
    signal: AbortSignal,
  ): Promise<{ response: ModelResponse; kinded: unknown }> {
    const body = orjsonDumps(engineRequest(params, kindedParams));
    const { url, answer } = await endpoint.run(
      async (url) => ({
        url,
        answer: (await timed(opts.onRequest, () =>
          postJsonText(url, body, {
            timeoutMs: opts.timeoutMs,
            signal,
            headers,
            connections: opts.maxConcurrency,
            parse: parseKinded,
          }),
        )) as KindedJson,
      }),
      { rank: opts.rank, affinity: session, signal },
    );
    const { plain, kinded } = answer;
    const raw = plain as Record<string, unknown>;
    if (opts.api === 'responses') {
      if (!Array.isArray(raw?.output))
        throw new RequestFailure('invalid_response', `${url} returned no "output" list`, true);
      return { response: raw as ModelResponse, kinded };
    }
    try {
      // A translated completion is a new object: only its plain numbers exist.
      const response = chatCompletionToResponse(raw) as ModelResponse;
      return { response, kinded: response };
    } catch (err) {
      if (err instanceof ChatConversionError)
        throw new RequestFailure('invalid_response', `${url} returned an unreadable completion: ${err.message}`, true);
      throw err;
    }
  }

  /**
   * The engine's request as NeMo Gym's model server sends it (orjson of the validated params, so
   * the row's `1.0` and a float field's `1` both arrive as `1.0`). A row the engine's API cannot
   * express fails the same way on every attempt, so it is not retried.
   */
  function engineRequest(params: Record<string, unknown>, kindedParams: JsonDict): PyValue {
    try {
      if (opts.api === 'chat_completions') return responsesRequestToChat(params, kindedParams);
      return responsesEngineRequest(kindedParams, { unpackExtraBody: opts.unpackExtraBody });
    } catch (err) {
      if (err instanceof ChatConversionError)
        throw new RequestFailure(
          'invalid_response',
          `row cannot be sent to ${endpoint.urls.join(', ')}: ${err.message}`,
          false,
        );
      throw err;
    }
  }

  return {
    async run(input: MaterializedInput, signal: AbortSignal) {
      const { row } = input;
      const expected = expectedActionSchema.safeParse(row.expected_action);
      if (!expected.success) {
        throw new RequestFailure(
          'invalid_response',
          `row (${row._ng_task_index}, ${row._ng_rollout_index}) has no valid expected_action`,
          false,
        );
      }
      const params: Record<string, unknown> = { ...row.responses_create_params };
      let kindedParams = (dictGet(input.value, 'responses_create_params') ?? {}) as JsonDict;
      if (opts.model) {
        params.model = opts.model;
        kindedParams = withEntries(kindedParams, { model: opts.model });
      }
      // The rollout is the session: its retries go back to the replica that answered it, as NeMo Gym
      // keeps a session on its replica.
      const { response, kinded } = await callModel(
        params,
        kindedParams,
        `${row._ng_task_index}:${row._ng_rollout_index}`,
        signal,
      );
      const { reward, category } = verifyResponse(expected.data, response, opts.comparatorConfig);
      // The reward is a Python float (BaseVerifyResponse.reward), written `1.0` as a resources server's is.
      const values: Record<SingleStepVerdictKey, PyValue> = { response: toPy(kinded), reward, category };
      const verdict = new Map<string, PyValue>(SINGLE_STEP_VERDICT_KEYS.map((k) => [k, values[k]]));
      return shardLine(keyedResult(input, withEntries(input.value, verdict)));
    },
  };
}
