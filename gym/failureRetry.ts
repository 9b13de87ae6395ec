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
