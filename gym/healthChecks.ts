import { rm } from 'node:fs/promises';
import { JsonlWriter, readLines } from './jsonl';
import { orjsonDumps } from './pythonJsonDumps';
import { digestRecord, type RolloutDigest } from './health/rolloutDigest';
import { HealthReducer, type QualitySummary } from './health/summary';
import { verdictRow, writeVerdictRows } from './health/verdictRows';
import { CHECK_IDS, type CheckId } from './health/registry';

// NeMo Gym 0.7.0's rollout health checks over a stage's rollouts (nemo_gym/rollout_health.py):
// every record through the single-rollout checks, then duplicate identities and the task checks,
// into the summary 0.7.0 writes as quality_summary.json. Read line by line; what is kept per
// rollout is a small code (health/summary.ts). A check never changes or drops a rollout.

export { CHECK_IDS, type CheckId } from './health/registry';
export type { QualitySummary } from './health/summary';

export interface HealthCheckOptions {
  /** Where to write 0.7.0's rollout_verdicts.jsonl; not written when absent. */
  verdictsPath?: string;
  /** The names the files go by in the verdict rows, where they differ from the paths read. */
  sourceNames?: readonly string[];
}

/** Runs the checks not ignored over the rollouts files, read in order as one stage. */
export async function runHealthChecks(
  files: readonly string[],
  ignored: readonly CheckId[],
  opts: HealthCheckOptions = {},
): Promise<QualitySummary> {
  const reducer = new HealthReducer(new Set(ignored));
  if (opts.verdictsPath === undefined) {
    await digestFiles(files, ignored, opts, (digest) => reducer.add(digest));
    return reducer.finish();
  }
  const scratch = `${opts.verdictsPath}.unsorted`;
  const rows = await JsonlWriter.open(scratch);
  try {
    await digestFiles(files, ignored, opts, async (digest) => {
      const offset = rows.bytesWritten;
      await rows.writeLine(verdictRow(digest));
      reducer.add(digest, { offset, length: rows.bytesWritten - offset });
    });
    await rows.close();
  } catch (err) {
    await rows.close().catch(() => undefined);
    await rm(scratch, { force: true });
    throw err;
  }
  const summary = reducer.finish();
  await writeVerdictRows(reducer, scratch, opts.verdictsPath);
  return summary;
}

async function digestFiles(
  files: readonly string[],
  ignored: readonly CheckId[],
  opts: HealthCheckOptions,
  onDigest: (digest: RolloutDigest) => unknown,
): Promise<void> {
  const ignoredSet = new Set(ignored);
  let ordinal = 0;
  for (const [sourceIndex, rolloutsPath] of files.entries()) {
    const file = opts.sourceNames?.[sourceIndex] ?? rolloutsPath;
    for await (const { text, line } of readLines(rolloutsPath)) {
      if (text.trim() === '') continue;
      await onDigest(digestRecord(text, { file, sourceIndex, line, ordinal: ordinal++ }, ignoredSet));
    }
  }
}

const counts = (record: Record<string, number>) =>
  new Map(Object.entries(record).map(([key, n]) => [key, BigInt(n)] as const));

/** The summary as 0.7.0's quality_summary.json holds it, byte for byte. */
export function qualitySummaryJson(s: QualitySummary): string {
  const errors = s.modelCallErrors;
  const byStatus = [...errors.byStatus].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const run = new Map<string, unknown>([
    ['ignored_checks', s.ignoredChecks],
    [
      'artifacts',
      new Map<string, unknown>([
        ['records', BigInt(s.records)],
        ['captures', BigInt(s.captures)],
        ['coverage', new Map(CHECK_IDS.map((id) => [id, counts(s.coverage[id])]))],
      ]),
    ],
    ['verdicts', counts(s.verdicts)],
    ['issues', counts(s.issues)],
    [
      'stats',
      new Map<string, unknown>([
        [
          'model_call_errors',
          new Map<string, unknown>([
            ['total', BigInt(errors.total)],
            ['by_status', new Map(byStatus.map(([status, n]) => [status, BigInt(n)]))],
            ['rollouts_affected', BigInt(errors.rolloutsAffected)],
            ['ended_on_error', BigInt(errors.endedOnError)],
          ]),
        ],
        ['duplicated_calls', counts(s.duplicatedCalls)],
        [
          'tokens',
          counts({
            prompt: s.tokens.prompt,
            completion: s.tokens.completion,
            capture_prompt: s.tokens.capturePrompt,
            capture_completion: s.tokens.captureCompletion,
          }),
        ],
      ]),
    ],
  ]);
  const tasks = new Map(
    s.tasks.map((t) => [
      t.key,
      new Map<string, unknown>([['repeats', BigInt(t.repeats)], ...counts(t.verdicts), ['flags', t.flags]]),
    ]),
  );
  return orjsonDumps(
    new Map<string, unknown>([
      ['run', run],
      ['tasks', tasks],
    ]),
    { indent: 2 },
  );
}
