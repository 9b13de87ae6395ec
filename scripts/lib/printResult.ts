import type { PivotMiningResult } from '../../contracts/payloads';

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
  ['published', 'published pivots'],
];

/** Prints the per-stage counts and artifact paths; the last stdout line is the pivots.jsonl path. */
export function printResult(result: PivotMiningResult): void {
  console.log(`run ${result.runId}: ${result.runDir}`);
  for (const [key, label] of FUNNEL) {
    if (result.counts[key] !== undefined) console.log(`  ${label.padEnd(28)} ${result.counts[key]}`);
  }
  const verdict = result.validatorExitCode === 0 ? 'accepted' : `rejected (exit ${result.validatorExitCode})`;
  console.log(`validator:  ${verdict} by pivot-miner validate (NeMo Gym's validate_pivot_dataset.py rules)`);
  console.log(`gym config: ${result.gymConfigPath}`);
  console.log(`report:     ${result.reportPath}`);
  console.log(result.pivotsPath);
}
