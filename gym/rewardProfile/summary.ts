import { pythonRound } from '../pythonJsonDumps';
import type { RewardProfileOutputs } from './index';

// The lines `ng_reward_profile` prints after profiling, 0.7.0's or 0.4.0's.

/** Python's `f"{x:.2f}"`: rounds the exact binary value half to even, where `toFixed` rounds half up. */
function percent(x: number): string {
  return pythonRound(x, 2).toFixed(2);
}

/** The lines `ng_reward_profile` prints after profiling. */
export function formatProfileSummary(
  outputs: Pick<
    RewardProfileOutputs,
    'summary' | 'rewardProfilingPath' | 'agentMetricsPath' | 'repeatLevelMetricsPath' | 'masked'
  >,
): string {
  const s = outputs.summary;
  const gym070 = outputs.repeatLevelMetricsPath !== undefined;
  return [
    'Profiling outputs:',
    `Reward profile completion: ${s.completed_rollout_rows}/${s.expected_rollout_rows} rollout rows (${percent(s.reward_profile_completion_pct)}%)`,
    `Input rows: ${s.total_input_rows} total; ${s.complete_input_rows} complete; ${s.partial_input_rows} partial; ${s.missing_input_rows} without rollouts dropped from output.`,
    ...(gym070
      ? [`Masked from quality metrics: ${outputs.masked ?? 0} rollout rows (kept in completion accounting above).`]
      : []),
    `Reward profiling outputs: ${outputs.rewardProfilingPath}`,
    `Agent-level metrics: ${outputs.agentMetricsPath}`,
    ...(gym070 ? [`Repeat-level metrics: ${outputs.repeatLevelMetricsPath}`] : []),
  ].join('\n');
}
