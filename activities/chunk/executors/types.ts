import { pythonTruthy } from '../../../gym/aggregateMetrics';
import { isTerminalFailure } from '../../../gym/failureRetry';
import { dictGet, pickEntries, withEntries, type JsonDict } from '../../../gym/kindedJson';
import { ENVIRONMENT_SERVER_STAMP } from '../../../gym/runLabels';
import type { RowKeys } from '../../../gym/rolloutSplice';
import type { MaterializedRow } from '../../../gym/schemas';
import { RequestFailure } from '../../http/client';

/**
 * One line of the materialized inputs: its key and agent, `text` the line itself, which is what
 * NeMo Gym posts (`orjson.dumps(row)`), `keys` its result entries when the line is in orjson's form
 * (gym/rolloutSplice.ts), `row` to read fields from and `value` with Python's number kinds to write
 * back (both decoded when first read: see materializedLine.ts).
 */
export interface MaterializedInput {
  readonly task: number;
  readonly rollout: number;
  readonly agentName: string;
  readonly text: string;
  readonly keys: RowKeys | undefined;
  readonly row: MaterializedRow;
  readonly value: JsonDict;
}

/**
 * A row the collection time budget did not let start (gym/dispatchBudget.ts): not a failure, so it is
 * neither retried nor written anywhere, and a resume runs it (0.7.0's `_ng_dispatch_drained`).
 */
export class DispatchDrained extends Error {
  constructor() {
    super('not dispatched: collect.dispatch_budget_s ran out');
    this.name = 'DispatchDrained';
  }
}

/**
 * Runs one materialized row to a rollout's shard line (activities/chunk/shardLines.ts), its result kinded
 * as NeMo Gym writes it. Implementations throw RequestFailure for anything that went wrong on the
 * wire, so retries and the failures sidecar treat every executor alike.
 */
export interface RolloutExecutor {
  run(input: MaterializedInput, signal: AbortSignal): Promise<string>;
}

const RESULT_KEYS = ['_ng_task_index', '_ng_rollout_index', 'agent_ref'] as const;
const STAMPED_RESULT_KEYS = [...RESULT_KEYS, ENVIRONMENT_SERVER_STAMP] as const;

/**
 * NeMo Gym keys each result by the row's indices and agent, whatever the server echoed back
 * (rollout_collection.py RolloutCollectionHelper.run_from_config assigns `_ng_task_index`,
 * `_ng_rollout_index`, then `agent_ref`), so key order and the row's number kinds match its lines.
 * 0.7.0 then names the environment server the rollout ran through: a row's stamp, when it has one,
 * is that server, and groups its rollout for aggregate metrics (pivot-miner names no other).
 */
export function keyedResult(input: Pick<MaterializedInput, 'value'>, result: JsonDict): JsonDict {
  const stamped = typeof dictGet(input.value, ENVIRONMENT_SERVER_STAMP) === 'string';
  return withEntries(result, pickEntries(input.value, stamped ? STAMPED_RESULT_KEYS : RESULT_KEYS));
}

// The routing sentinels a NeMo Gym agent may set on a 200 `/run` result (rollout_collection.py
// NG_FAILURE_CLASS_KEY, NG_NO_PERSIST_KEY, and NG_TERMINAL_KEY read in gym/failureRetry.ts; set e.g. by
// stirrup_agent).
const NG_FAILURE_CLASS_KEY = '_ng_failure_class';
const NG_NO_PERSIST_KEY = '_ng_no_persist';

/**
 * A rollout the agent itself reports as failed. NeMo Gym never counts it as a rollout: with
 * `_ng_no_persist` it is written nowhere (the absence of a line makes a resume run it again), else
 * the result goes to the failures sidecar, one line per attempt, and a terminal one is never tried
 * again (`_load_from_cache` gates terminal keys; gym/failureRetry.ts decides which are).
 */
export class AgentReportedFailure extends RequestFailure {
  constructor(
    /** The keyed result, as NeMo Gym writes it to the sidecar. */
    readonly result: JsonDict,
    readonly agentFailureClass: string,
    readonly noPersist: boolean,
    readonly terminal: boolean,
    message: string,
  ) {
    super('agent_reported', message, !terminal);
    this.name = 'AgentReportedFailure';
  }
}

/**
 * The failure an agent's result reports, decided as run_from_config does: no-persist first, then a
 * failure class. `result` is read, `keyed` (the same result keyed) is what the sidecar gets. Whether
 * it is terminal follows 0.7.0's `is_terminal_failure` with `retry_terminal_timeouts`.
 */
export function agentReportedFailure(
  result: Record<string, unknown>,
  keyed: JsonDict,
  url: string,
  retryTerminalTimeouts: boolean,
): AgentReportedFailure | undefined {
  const noPersist = pythonTruthy(result[NG_NO_PERSIST_KEY]);
  const failureClass = result[NG_FAILURE_CLASS_KEY];
  if (!noPersist && (failureClass === undefined || failureClass === null)) return undefined;
  const cls =
    failureClass === undefined || failureClass === null
      ? 'no_persist'
      : typeof failureClass === 'string'
        ? failureClass
        : JSON.stringify(failureClass);
  const terminal = !noPersist && isTerminalFailure(result, retryTerminalTimeouts);
  const detail = typeof result.error_message === 'string' ? `: ${result.error_message}` : '';
  return new AgentReportedFailure(
    keyed,
    cls,
    noPersist,
    terminal,
    `${url} reported a failed rollout (${NG_FAILURE_CLASS_KEY}=${cls})${detail}`,
  );
}
