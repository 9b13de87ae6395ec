import { pythonTruthy } from '../../gym/aggregateMetrics';
import type { MaterializedRow } from '../../gym/schemas';
import { RequestFailure } from '../http/client';

/**
 * Runs one materialized row to a rollout result. Implementations throw RequestFailure for anything
 * that went wrong on the wire, so retries and the failures sidecar treat every executor alike.
 */
export interface RolloutExecutor {
  run(row: MaterializedRow, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/**
 * NeMo Gym keys each result by the row's indices and agent, whatever the server echoed back
 * (rollout_collection.py RolloutCollectionHelper.run_from_config assigns `_ng_task_index`,
 * `_ng_rollout_index`, then `agent_ref`). Assigning to a dict key keeps its place, appending a new
 * one puts it last; object spread does the same, so key order matches NeMo Gym's lines.
 */
export function keyedResult(row: MaterializedRow, result: Record<string, unknown>): Record<string, unknown> {
  return { ...result, _ng_task_index: row._ng_task_index, _ng_rollout_index: row._ng_rollout_index, agent_ref: row.agent_ref };
}

// The routing sentinels a NeMo Gym agent may set on a 200 `/run` result (rollout_collection.py
// NG_FAILURE_CLASS_KEY, NG_NO_PERSIST_KEY, NG_TERMINAL_KEY; set e.g. by stirrup_agent).
const NG_FAILURE_CLASS_KEY = '_ng_failure_class';
const NG_NO_PERSIST_KEY = '_ng_no_persist';
const NG_TERMINAL_KEY = '_ng_failure_terminal';

/**
 * A rollout the agent itself reports as failed. NeMo Gym never counts it as a rollout: with
 * `_ng_no_persist` it is written nowhere (the absence of a line makes a resume run it again), else
 * the result goes to the failures sidecar, one line per attempt, and `_ng_failure_terminal` means
 * it is never tried again (`_load_from_cache` gates terminal keys).
 */
export class AgentReportedFailure extends RequestFailure {
  constructor(
    /** The keyed result, as NeMo Gym writes it to the sidecar. */
    readonly result: Record<string, unknown>,
    readonly agentFailureClass: string,
    readonly noPersist: boolean,
    readonly terminal: boolean,
    message: string,
  ) {
    super('agent_reported', message, !terminal);
    this.name = 'AgentReportedFailure';
  }
}

/** The failure a keyed result reports, decided as run_from_config does: no-persist first, then a failure class. */
export function agentReportedFailure(result: Record<string, unknown>, url: string): AgentReportedFailure | undefined {
  const noPersist = pythonTruthy(result[NG_NO_PERSIST_KEY]);
  const failureClass = result[NG_FAILURE_CLASS_KEY];
  if (!noPersist && (failureClass === undefined || failureClass === null)) return undefined;
  const cls = failureClass === undefined || failureClass === null ? 'no_persist' : String(failureClass);
  const terminal = !noPersist && pythonTruthy(result[NG_TERMINAL_KEY]);
  const detail = typeof result.error_message === 'string' ? `: ${result.error_message}` : '';
  return new AgentReportedFailure(result, cls, noPersist, terminal, `${url} reported a failed rollout (${NG_FAILURE_CLASS_KEY}=${cls})${detail}`);
}

/** True for a sidecar line NeMo Gym would never retry. */
export function isTerminalFailureLine(line: Record<string, unknown>): boolean {
  return pythonTruthy(line[NG_TERMINAL_KEY]);
}
