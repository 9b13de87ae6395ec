import path from 'node:path';
import { log } from '@temporalio/activity';
import { writeFileDurably } from '../../gym/durable';
import { qualitySummaryJson, runHealthChecks } from '../../gym/healthChecks';
import { QUALITY_SUMMARY_SUFFIX, ROLLOUT_VERDICTS_SUFFIX } from '../../gym/health/registry';
import { STAGE_HEALTH_SUFFIX, stageHealthOf, type StageHealth } from '../../gym/health/stageHealth';
import { RolloutHealthError } from '../../contracts/errors';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';

// NeMo Gym 0.7.0's health checks on a stage's merged rollouts, in the stage's finish: 0.7.0's
// quality_summary.json and rollout_verdicts.jsonl, and our brief of them, written in the finish's
// view and published with the stage's other files. A finding never changes or holds back a rollout.

export interface CheckedHealth {
  health: StageHealth;
  /** [written in the view, published name] of each file. */
  moves: Array<[string, string]>;
}

/**
 * Runs the checks unless the config disables them. Checks that cannot run (a rollouts file that is
 * not UTF-8) leave the stage unchecked rather than failed, as in 0.7.0.
 */
export async function checkStageHealth(input: {
  plan: RunPlan;
  view: string;
  outPrefix: string;
}): Promise<CheckedHealth | undefined> {
  const { config } = input.plan;
  if (config.disable_health_check) return undefined;
  try {
    return await writeHealth(input);
  } catch (err) {
    log.warn('rollout health checks failed; the stage goes on unchecked', {
      outPrefix: input.outPrefix,
      error: String(err),
    });
    return undefined;
  }
}

async function writeHealth(input: { plan: RunPlan; view: string; outPrefix: string }): Promise<CheckedHealth> {
  const { view, outPrefix } = input;
  const summary = await runHealthChecks([`${view}.jsonl`], input.plan.config.health_check_ignored_checks ?? [], {
    verdictsPath: `${view}${ROLLOUT_VERDICTS_SUFFIX}`,
    sourceNames: [`${outPrefix}.jsonl`],
  });
  const health = stageHealthOf(summary, `${path.basename(outPrefix)}${QUALITY_SUMMARY_SUFFIX}`);
  await writeFileDurably(`${view}${QUALITY_SUMMARY_SUFFIX}`, qualitySummaryJson(summary));
  await writeFileDurably(`${view}${STAGE_HEALTH_SUFFIX}`, `${JSON.stringify(health, null, 2)}\n`);
  const suffixes = [QUALITY_SUMMARY_SUFFIX, ROLLOUT_VERDICTS_SUFFIX, STAGE_HEALTH_SUFFIX];
  return { health, moves: suffixes.map((suffix) => [`${view}${suffix}`, `${outPrefix}${suffix}`]) };
}

/** With health_check_stops_run, the error that ends the run once a stage's files are published. */
export function healthStop(plan: RunPlan, stage: RolloutStage, outPrefix: string, checked?: CheckedHealth): void {
  const failed = checked?.health.failed_checks ?? [];
  if (!plan.config.health_check_stops_run || failed.length === 0) return;
  const counts = failed.map((id) => `${id} (${checked!.health.checks[id]?.issues ?? 0})`).join(', ');
  throw new RolloutHealthError(
    `${stage} rollouts failed health checks: ${counts}; see ${outPrefix}${STAGE_HEALTH_SUFFIX}. ` +
      'The stage files are published; to go on, fix the rollouts, list the checks in health_check_ignored_checks, ' +
      'or set health_check_stops_run: false, and run again.',
  );
}
