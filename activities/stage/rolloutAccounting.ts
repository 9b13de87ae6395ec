import { readLines } from '../../gym/jsonl';
import { RolloutAccountant, type RolloutAccounting } from '../../gym/rolloutAccounting';
import { stageSettings } from '../../contracts/stageSettings';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import { isTerminalFailure } from '../../gym/failureRetry';
import { mergedDigestsPath, mergedPaths, readMaterializedMeta } from '../chunk/chunkIndex';

// A merged stage's accounting (gym/rolloutAccounting.ts), from the files its finish wrote: the
// materialized meta for what was expected, the failures sidecar, and the keys of the main file,
// read from the merge's digests (a few hundred bytes a rollout) rather than the rollouts themselves
// where every rollout has one.

type Keyed = { _ng_task_index?: unknown; _ng_rollout_index?: unknown };
const keyOf = (v: Keyed): string => `${String(v._ng_task_index)}:${String(v._ng_rollout_index)}`;

function failureClassOf(line: Record<string, unknown>): string {
  if (typeof line.failure_class === 'string') return line.failure_class;
  if (typeof line._ng_failure_class === 'string') return line._ng_failure_class;
  return 'unknown';
}

async function accountantWithFailures(
  failuresPath: string,
  expected: number,
  { maxAttempts, retryTerminalTimeouts }: { maxAttempts: number; retryTerminalTimeouts: boolean },
): Promise<RolloutAccountant> {
  const accountant = new RolloutAccountant(expected, maxAttempts);
  for await (const { text } of readLinesIfAny(failuresPath)) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as Record<string, unknown>;
    accountant.addFailure(keyOf(line), failureClassOf(line), isTerminalFailure(line, retryTerminalTimeouts));
  }
  return accountant;
}

async function* readLinesIfAny(file: string): AsyncGenerator<{ text: string }> {
  try {
    yield* readLines(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Feeds the main file's keys from the digests; false (having fed nothing) when a rollout has none. */
async function addSuccessesFromDigests(accountant: RolloutAccountant, digestsPath: string): Promise<boolean> {
  for await (const { text } of readLines(digestsPath)) {
    if (text === 'null') return false;
  }
  for await (const { text } of readLines(digestsPath)) {
    if (text.trim() !== '') accountant.addSuccess(keyOf(JSON.parse(text) as Keyed));
  }
  return true;
}

export async function stageAccounting(input: {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
}): Promise<RolloutAccounting> {
  const meta = await readMaterializedMeta(input.outPrefix);
  if (meta === undefined) throw new Error(`${input.outPrefix}: the stage has no materialized inputs to account for`);
  const { rolloutsPath, failuresPath } = mergedPaths(input.outPrefix);
  const accountant = await accountantWithFailures(failuresPath, meta.rows, stageSettings(input.plan, input.stage));
  const digestsPath = await mergedDigestsPath(input.outPrefix);
  if (digestsPath === undefined || !(await addSuccessesFromDigests(accountant, digestsPath))) {
    for await (const { text } of readLines(rolloutsPath)) {
      if (text.trim() !== '') accountant.addSuccess(keyOf(JSON.parse(text) as Keyed));
    }
  }
  return accountant.result();
}
