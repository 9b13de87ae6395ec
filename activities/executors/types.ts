import type { MaterializedRow } from '../../gym/schemas';

/**
 * Runs one materialized row to a rollout result. Implementations throw RequestFailure for anything
 * that went wrong on the wire, so retries and the failures sidecar treat every executor alike.
 */
export interface RolloutExecutor {
  run(row: MaterializedRow, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** NeMo Gym keys each result by the row's indices, whatever the server echoed back. */
export function keyedResult(row: MaterializedRow, result: Record<string, unknown>): Record<string, unknown> {
  return { ...result, _ng_task_index: row._ng_task_index, _ng_rollout_index: row._ng_rollout_index };
}
