import type { MaterializedRow } from '../../gym/schemas';
import { postJson, RequestFailure } from '../http/client';
import { endpointLimiter } from '../http/endpointLimiter';
import { keyedResult, type RolloutExecutor } from './types';

/** `gym_agent`: the row goes to a NeMo Gym agent's POST /run, which runs the model ↔ tool loop and verifies. */
export function gymAgentExecutor(opts: { agentUrl: string; timeoutMs: number; maxConcurrency: number }): RolloutExecutor {
  const url = new URL('/run', opts.agentUrl).toString();
  const limiter = endpointLimiter(url, opts.maxConcurrency);
  return {
    async run(row: MaterializedRow, signal: AbortSignal) {
      const result = await limiter.run(() =>
        postJson(url, row, { timeoutMs: opts.timeoutMs, signal, connections: opts.maxConcurrency }),
      );
      if (!result || typeof result !== 'object' || Array.isArray(result) || !('response' in result)) {
        throw new RequestFailure('invalid_response', `${url} returned a result without "response"`, true);
      }
      return keyedResult(row, result as Record<string, unknown>);
    },
  };
}
