import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { CHECK_IDS } from './registry';
import type { QualitySummary } from './summary';

// A stage's health in brief, as run_summary.json, report.html and `pivot-miner status` show it:
// each check's id with a verdict, the rollouts' verdicts, and a few findings to look up. Written by
// the stage's finish beside 0.7.0's own quality_summary.json, which holds the full counts.

/** A check fails when it found anything; is unobserved when no rollout held what it reads. */
const checkVerdict = z.enum(['pass', 'fail', 'unobserved', 'ignored']);

const checkId = z.enum(CHECK_IDS);

export const stageHealthSchema = z.strictObject({
  /** 0.7.0's summary, beside this file. */
  quality_summary: z.string(),
  records: z.number().int().min(0),
  verdicts: z.strictObject({
    healthy: z.number().int().min(0),
    unhealthy: z.number().int().min(0),
    unobserved: z.number().int().min(0),
  }),
  ignored_checks: z.array(checkId),
  failed_checks: z.array(checkId),
  checks: z.record(checkId, z.strictObject({ verdict: checkVerdict, issues: z.number().int().min(0) })),
  examples: z.partialRecord(
    checkId,
    z.array(
      z.strictObject({
        rollout_id: z.string(),
        locator: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
        detail: z.record(z.string(), z.unknown()),
      }),
    ),
  ),
});
export type StageHealth = z.infer<typeof stageHealthSchema>;

export const STAGE_HEALTH_SUFFIX = '_health.json';

/** The stages' outPrefixes under a run directory, as the run workflow names them. */
export const STAGE_PREFIXES: Record<string, string> = { collect: 'rollouts', local_profile: 'local_profile' };

export function stageHealthOf(s: QualitySummary, qualitySummaryFile: string): StageHealth {
  const ignored = new Set<string>(s.ignoredChecks);
  const checks = Object.fromEntries(
    CHECK_IDS.map((id) => {
      const issues = s.issues[id];
      const cover = s.coverage[id];
      const verdict = ignored.has(id) ? 'ignored' : issues > 0 ? 'fail' : cover.evaluated === 0 ? 'unobserved' : 'pass';
      return [id, { verdict, issues }];
    }),
  ) as StageHealth['checks'];
  const examples = Object.fromEntries(
    Object.entries(s.examples).map(([id, list]) => [
      id,
      list.map((e) => ({ rollout_id: e.rolloutId, ...(e.locator ? { locator: e.locator } : {}), detail: e.detail })),
    ]),
  );
  return {
    quality_summary: qualitySummaryFile,
    records: s.records,
    verdicts: { ...s.verdicts },
    ignored_checks: s.ignoredChecks,
    failed_checks: CHECK_IDS.filter((id) => checks[id]?.verdict === 'fail'),
    checks,
    examples,
  };
}

/** A stage's health file, or undefined where the stage wrote none (health checks disabled, or an older run). */
export async function readStageHealth(file: string): Promise<StageHealth | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = stageHealthSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${file}: not a stage health file: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** `collect: 16 checked, 1 healthy, 12 unhealthy, 3 unobserved; failed: model_call_failed 3, ... (ignored: ...)`. */
export function healthLine(stage: string, h: StageHealth): string {
  const v = h.verdicts;
  const failed = h.failed_checks.map((id) => `${id} ${h.checks[id]?.issues ?? 0}`);
  const ignored = h.ignored_checks.length > 0 ? ` (ignored: ${h.ignored_checks.join(', ')})` : '';
  return (
    `${stage}: ${h.records} checked, ${v.healthy} healthy, ${v.unhealthy} unhealthy, ${v.unobserved} unobserved; ` +
    `${failed.length > 0 ? `failed: ${failed.join(', ')}` : 'no check failed'}${ignored}`
  );
}

/** The health each rollout stage of a run wrote, by stage; stages that wrote none are left out. */
export async function readRunHealth(runDir: string): Promise<Record<string, StageHealth>> {
  const health: Record<string, StageHealth> = {};
  for (const [stage, prefix] of Object.entries(STAGE_PREFIXES)) {
    const h = await readStageHealth(path.join(runDir, `${prefix}${STAGE_HEALTH_SUFFIX}`));
    if (h) health[stage] = h;
  }
  return health;
}
