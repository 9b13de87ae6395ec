import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { invalidJudgeFailureRow, isInvalidJudgeResponse } from '../../../gym/failureRetry';
import { dictGet, type JsonDict } from '../../../gym/kindedJson';
import { RequestFailure } from '../../http/client';

// NeMo Gym 0.7.0's `retry_invalid_judge_responses`: a result whose judge gave no usable verdict is
// not a rollout but a failed attempt, retried like any other, and its sidecar row is the one 0.7.0's
// migration (rollout_collection.py `migrate_invalid_judge_main_rows`) writes for it.

/** Run state NeMo Gym keeps beside an agent's output, never a deliverable (nemo_gym/deliverables.py). */
const NOT_DELIVERABLES: ReadonlySet<string> = new Set([
  'finish_params.json',
  'history.json',
  'history.pkl',
  'inprogress_history.json',
  'metadata.json',
  'log.txt',
  'reference_files',
]);

/** An invalid judge response as a retryable failed attempt; `row` is its sidecar row. */
export class InvalidJudgeResponse extends RequestFailure {
  constructor(
    readonly row: JsonDict,
    message: string,
  ) {
    super('judge_invalid', message, true);
    this.name = 'InvalidJudgeResponse';
  }
}

/** Whether the result's `deliverables_dir` holds a file the agent produced, as 0.7.0 looks (symlinks followed). */
async function hasCachedDeliverable(result: JsonDict): Promise<boolean> {
  const dir = dictGet(result, 'deliverables_dir');
  if (typeof dir !== 'string' || dir === '') return false;
  try {
    for (const name of await readdir(dir)) {
      if (NOT_DELIVERABLES.has(name)) continue;
      if ((await stat(path.join(dir, name)).catch(() => undefined))?.isFile()) return true;
    }
  } catch {
    // Not a directory, or one that cannot be read: 0.7.0 then has no deliverable to reuse either.
  }
  return false;
}

/** The failure `keyed` (an agent's keyed result) is under `retry_invalid_judge_responses`, if any. */
export async function invalidJudgeResponse(keyed: JsonDict, url: string): Promise<InvalidJudgeResponse | undefined> {
  if (!isInvalidJudgeResponse(keyed)) return undefined;
  const row = invalidJudgeFailureRow(keyed, await hasCachedDeliverable(keyed));
  return new InvalidJudgeResponse(row, `${url} returned a result whose judge response was invalid`);
}
