import { readLines } from './jsonl';
import { orjsonDumps } from './pythonJsonDumps';
import { digestRecord } from './health/rolloutDigest';
import { HealthReducer, type QualitySummary } from './health/summary';
import { CHECK_IDS, type CheckId } from './health/registry';

// NeMo Gym 0.7.0's rollout health checks over a stage's rollouts (nemo_gym/rollout_health.py):
// every record through the single-rollout checks, then duplicate identities and the task checks,
// into the summary 0.7.0 writes as quality_summary.json. Read line by line; what is kept per
// rollout is a small code (health/summary.ts). A check never changes or drops a rollout.

export { CHECK_IDS, type CheckId } from './health/registry';
export type { QualitySummary } from './health/summary';

/** Runs the checks not ignored over the rollouts files, read in order as one stage. */
export async function runHealthChecks(files: readonly string[], ignored: readonly CheckId[]): Promise<QualitySummary> {
  const ignoredSet = new Set(ignored);
  const reducer = new HealthReducer(ignoredSet);
  let ordinal = 0;
  for (const [sourceIndex, file] of files.entries()) {
    for await (const { text, line } of readLines(file)) {
      if (text.trim() === '') continue;
      reducer.add(digestRecord(text, { file, sourceIndex, line, ordinal: ordinal++ }, ignoredSet));
    }
  }
  return reducer.finish();
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

/** Health-check ids as 0.7.0 takes them: a list or one comma-separated string, blanks and repeats dropped. */
export function normalizeIgnoredChecks(checks: readonly string[] | string): CheckId[] {
  const raw = typeof checks === 'string' ? checks.split(',') : checks;
  const ids = [...new Set(raw.map((c) => c.trim()).filter((c) => c !== ''))];
  const unknown = ids.filter((id) => !(CHECK_IDS as readonly string[]).includes(id)).sort();
  if (unknown.length > 0) throw new Error(`Unknown rollout health check(s): ${unknown.join(', ')}`);
  return ids as CheckId[];
}
