import { pythonTruthy } from './aggregateMetrics';
import { dictGet, shallowCopyDict, withEntries, type JsonDict } from './kindedJson';

// NeMo Gym 0.7.0's two retry options, as pure decisions on a row (rollout_collection.py
// `is_terminal_failure` and `migrate_invalid_judge_main_rows`). 0.7.0 applies them when a run
// resumes from its files; pivot-miner applies them to each attempt within the run and to the older
// attempts' lines a retried chunk reads (activities/chunk/chunk.ts).

const NG_FAILURE_CLASS_KEY = '_ng_failure_class';
const NG_TERMINAL_KEY = '_ng_failure_terminal';
const MIGRATED_INVALID_JUDGE_KEY = '_ng_migrated_invalid_judge_response';
const REUSE_CACHED_DELIVERABLE_KEY = 'reuse_cached_deliverable';

/** The sidecar class 0.7.0 gives a result whose judge answered with nothing it could score. */
export const JUDGE_INVALID_CLASS = 'judge_invalid';

// Classes agents and resources servers write that `retry_terminal_timeouts` retries even when
// stamped terminal: a per-task timeout says how loaded that attempt's run was, and these
// environment faults can be repaired between attempts.
const RETRYABLE_WHEN_OPTED_IN: ReadonlySet<unknown> = new Set([
  'timeout_exceeded',
  'reference_missing',
  'eval_missing',
  'transport_ineligible',
]);

/**
 * Whether a failed attempt's sidecar row must never be tried again. Off, that is its
 * `_ng_failure_terminal` stamp; with `retryTerminalTimeouts` the classes above are retried whatever
 * the stamp, `skipped` never is (a sample that cannot run), and any other class follows its stamp.
 */
export function isTerminalFailure(row: JsonDict, retryTerminalTimeouts: boolean): boolean {
  if (retryTerminalTimeouts) {
    const failureClass = dictGet(row, NG_FAILURE_CLASS_KEY);
    if (RETRYABLE_WHEN_OPTED_IN.has(failureClass)) return false;
    if (failureClass === 'skipped') return true;
  }
  return pythonTruthy(dictGet(row, NG_TERMINAL_KEY));
}

/** True for a result 0.7.0's `retry_invalid_judge_responses` moves out of the rollouts. */
export function isInvalidJudgeResponse(result: JsonDict): boolean {
  return pythonTruthy(dictGet(result, 'invalid_judge_response'));
}

/**
 * The sidecar row 0.7.0's migration writes for an invalid-judge result: the keyed result with its
 * failure class kept when it has one (else `judge_invalid`), no terminal stamp, the deliverable
 * flagged for reuse only when `hasCachedDeliverable`, then the marker that makes the migration
 * idempotent.
 */
export function invalidJudgeFailureRow(result: JsonDict, hasCachedDeliverable: boolean): JsonDict {
  const row = shallowCopyDict(result);
  const without = (key: string) => (row instanceof Map ? row.delete(key) : delete row[key]);
  without(NG_TERMINAL_KEY);
  if (!hasCachedDeliverable) without(REUSE_CACHED_DELIVERABLE_KEY);
  const failureClass = dictGet(row, NG_FAILURE_CLASS_KEY);
  return withEntries(row, {
    [NG_FAILURE_CLASS_KEY]: pythonTruthy(failureClass) ? failureClass : JUDGE_INVALID_CLASS,
    ...(hasCachedDeliverable ? { [REUSE_CACHED_DELIVERABLE_KEY]: true } : {}),
    [MIGRATED_INVALID_JUDGE_KEY]: true,
  });
}

/**
 * Whether a failed attempt's sidecar row asks that the rollout's retries re-judge the deliverable it
 * left rather than run the policy again: 0.7.0's resume reads a truthy `reuse_cached_deliverable` on
 * any of a rollout's sidecar rows so.
 */
export function reusesCachedDeliverable(row: JsonDict): boolean {
  return pythonTruthy(dictGet(row, REUSE_CACHED_DELIVERABLE_KEY));
}

/** The row such a retry posts: 0.7.0 sets the key on the materialized row, in place when it has one. */
export function reusingCachedDeliverable(row: JsonDict): JsonDict {
  return withEntries(row, { [REUSE_CACHED_DELIVERABLE_KEY]: true });
}

const ELAPSED_KEY = 'elapsed_seconds';
const PYTHON_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const PYTHON_FLOAT_WORD = /^[+-]?(?:inf|infinity|nan)$/i;

/** Python's `float(value)`, or undefined where it raises TypeError or ValueError. */
function pythonFloat(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (PYTHON_FLOAT.test(text)) return Number(text.replace(/_/g, ''));
  if (!PYTHON_FLOAT_WORD.test(text)) return undefined;
  const magnitude = /nan/i.test(text) ? NaN : Infinity;
  return text.startsWith('-') ? -magnitude : magnitude;
}

/**
 * How long a failed attempt ran, as an agent reports it (0.7.0's `observed_elapsed`): its
 * `elapsed_seconds`, else its response's `metadata.elapsed_seconds`, the first that Python reads as
 * a float above zero.
 */
export function observedElapsed(row: JsonDict): number | undefined {
  const response = dictGet(row, 'response');
  const metadata = response && typeof response === 'object' ? dictGet(response as JsonDict, 'metadata') : undefined;
  const nested = metadata && typeof metadata === 'object' ? dictGet(metadata as JsonDict, ELAPSED_KEY) : undefined;
  for (const candidate of [dictGet(row, ELAPSED_KEY), nested]) {
    const value = candidate === undefined || candidate === null ? undefined : pythonFloat(candidate);
    if (value !== undefined && value > 0) return value;
  }
  return undefined;
}
