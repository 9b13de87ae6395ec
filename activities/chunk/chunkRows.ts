import { readLines } from '../../gym/jsonl';
import { isTerminalFailure, observedElapsed, reusesCachedDeliverable } from '../../gym/failureRetry';
import type { StageSettings } from '../../contracts/stageSettings';
import type { ChunkInput } from '../../contracts/payloads';
import { chunkRange, materializedInputsPath, readMaterializedMeta } from './chunkIndex';
import { MaterializedLine } from './executors/materializedLine';
import type { MaterializedInput } from './executors/types';
import type { Held } from './fenceShards';

// Which rows of its chunk an attempt runs, and in what order, from what the older attempts' lines
// say: as NeMo Gym's resume (`_load_from_cache`) reads its sidecar, a retried chunk attempt (a worker
// that died, a run resumed after its dispatch budget) being pivot-miner's resume.

export const rolloutKey = (t: number, r: number) => `${t}:${r}`;

/** Failed attempts per key, the keys never to retry, those whose retries re-judge a deliverable, and how long they ran. */
export interface FailedAttempts {
  attempts: Map<string, number>;
  terminal: Set<string>;
  reuseCachedDeliverable: Set<string>;
  /** The longest elapsed time an agent reported for a failed attempt of the key, in seconds. */
  elapsed: Map<string, number>;
}

/** What the older attempts' failure lines say, read as NeMo Gym's `_load_from_cache` reads its sidecar. */
export function failedAttempts(held: Held, retryTerminalTimeouts: boolean): FailedAttempts {
  const failed: FailedAttempts = {
    attempts: new Map(),
    terminal: new Set(),
    reuseCachedDeliverable: new Set(),
    elapsed: new Map(),
  };
  for (const text of held.failureLines) {
    const line = JSON.parse(text) as Record<string, unknown> & { _ng_task_index: number; _ng_rollout_index: number };
    const k = rolloutKey(line._ng_task_index, line._ng_rollout_index);
    failed.attempts.set(k, (failed.attempts.get(k) ?? 0) + 1);
    if (isTerminalFailure(line, retryTerminalTimeouts)) failed.terminal.add(k);
    if (reusesCachedDeliverable(line)) failed.reuseCachedDeliverable.add(k);
    const elapsed = observedElapsed(line);
    if (elapsed !== undefined) failed.elapsed.set(k, Math.max(failed.elapsed.get(k) ?? 0, elapsed));
  }
  return failed;
}

/** The lines of the chunk's range of the materialized inputs, in order. */
async function* chunkLines(input: ChunkInput): AsyncGenerator<MaterializedLine> {
  const meta = await readMaterializedMeta(input.outPrefix);
  if (!meta) throw new Error(`${input.outPrefix}: materialized inputs are not finished`);
  const range = await chunkRange(input.outPrefix, input.chunkIndex, meta.chunkSize);
  const inputsPath = materializedInputsPath(input.outPrefix);
  // The meta file says materializeStage finished writing these lines.
  for await (const { text, line } of readLines(inputsPath, range)) {
    if (text !== '') yield new MaterializedLine(text, inputsPath, line);
  }
}

/**
 * The rows whose failed attempts reported how long they ran, longest first, as 0.7.0's
 * `dispatch_longest_first` puts them ahead of a resume's other rows (a stable sort, so equal times
 * keep their order). Only those rows are held, a few among the chunk's.
 */
async function longestFirst(
  input: ChunkInput,
  runs: (row: MaterializedInput) => boolean,
  elapsed: Map<string, number>,
) {
  const known: { row: MaterializedInput; seconds: number }[] = [];
  for await (const row of chunkLines(input)) {
    const seconds = elapsed.get(rolloutKey(row.task, row.rollout));
    if (seconds !== undefined && runs(row)) known.push({ row, seconds });
  }
  return known.sort((a, b) => b.seconds - a.seconds).map(({ row }) => row);
}

/**
 * The rows of a chunk an attempt still has to run: not done, not failed for good, not out of
 * attempts; in materialized order, or with `dispatchLongestFirst` those with a reported elapsed time
 * first. The order is only when each starts: the merge writes every file in materialized order.
 */
export async function* rowsToRun(
  input: ChunkInput,
  held: Held,
  failed: FailedAttempts,
  settings: StageSettings,
  progress: { alreadyDone: number },
): AsyncGenerator<MaterializedInput> {
  const runs = (row: MaterializedInput) => {
    const k = rolloutKey(row.task, row.rollout);
    return !held.keys.has(k) && !failed.terminal.has(k) && (failed.attempts.get(k) ?? 0) < settings.maxAttempts;
  };
  const first =
    settings.dispatchLongestFirst && failed.elapsed.size > 0 ? await longestFirst(input, runs, failed.elapsed) : [];
  yield* first;
  const started = new Set(first.map((row) => rolloutKey(row.task, row.rollout)));
  for await (const row of chunkLines(input)) {
    if (!runs(row)) progress.alreadyDone++;
    else if (!started.has(rolloutKey(row.task, row.rollout))) yield row;
  }
}
