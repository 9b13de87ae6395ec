import type { PivotMiningResult } from '../../contracts/payloads';
import type { RolloutAccounting } from '../../gym/rolloutAccounting';

const FUNNEL: Array<[string, string]> = [
  ['tasks', 'tasks'],
  ['rollouts', 'rollouts'],
  ['rollout_failures', 'rollout failures'],
  ['positive_trajectories', 'positive trajectories'],
  ['decision_points', 'decision points'],
  ['candidates', 'candidates'],
  ['skipped', 'skipped decision points'],
  ['deduped', 'duplicate pivots (kept once)'],
  ['local_profile_rollouts', 'local-profile samples'],
  ['all_pass', 'all-pass pivots (dropped)'],
  ['all_fail', 'all-fail pivots (dropped)'],
  ['mixed', 'mixed pivots'],
  ['over_ceiling', 'over pass-rate ceiling'],
  ['over_budget', 'over budget (max_pivots)'],
  ['over_share', 'over action-kind share'],
  ['held_back_incomplete', 'incomplete (held back)'],
  ['published', 'published pivots'],
  ['published_partial', '  of them partial'],
];

/** `collect: 12 expected = 11 succeeded + 1 failed (http_5xx 1; 1 terminal) + 0 omitted`. */
export function accountingLine(stage: string, a: RolloutAccounting): string {
  const classes = Object.entries(a.failed_by_class).map(([cls, n]) => `${cls} ${n}`);
  const detail = a.failed > 0 ? ` (${classes.join(', ')}; ${a.terminal} terminal)` : '';
  return `${stage}: ${a.expected} expected = ${a.succeeded} succeeded + ${a.failed} failed${detail} + ${a.omitted} omitted`;
}

/** Prints the per-stage counts and artifact paths; the last stdout line is the pivots.jsonl path. */
export function printResult(result: PivotMiningResult): void {
  console.log(`run ${result.runId}: ${result.runDir}`);
  for (const [key, label] of FUNNEL) {
    if (result.counts[key] !== undefined) console.log(`  ${label.padEnd(28)} ${result.counts[key]}`);
  }
  for (const [stage, a] of Object.entries(result.accounting ?? {})) console.log(`rollouts ${accountingLine(stage, a)}`);
  if (result.runSummaryPath) console.log(`summary:    ${result.runSummaryPath}`);
  const verdict = result.validatorExitCode === 0 ? 'accepted' : `rejected (exit ${result.validatorExitCode})`;
  console.log(`validator:  ${verdict} by pivot-miner validate (NeMo Gym's validate_pivot_dataset.py rules)`);
  console.log(`gym config: ${result.gymConfigPath}`);
  console.log(`report:     ${result.reportPath}`);
  console.log(result.pivotsPath);
}
