import { writeRewardProfile } from '../gym/rewardProfile';
import { countOutcomes } from '../gym/selection';
import { materializedInputsPath } from './chunkIndex';
import type { ProfileResult } from '../contracts/payloads';

/** Reward profiling of a merged stage, exactly as `ng_reward_profile` would write it next to the rollouts. */
export async function profileStage(input: { outPrefix: string; allowPartialRollouts: boolean }): Promise<ProfileResult> {
  // Tasks are counted as their rows are written, so no run's group rows are held at once.
  const outcomes = countOutcomes([], input.allowPartialRollouts);
  // Strict mode failing on missing rollouts throws RewardProfileError: a verdict about the data,
  // which the workflows' retry policy lists as non-retryable.
  const out = await writeRewardProfile({
    materializedInputsPath: materializedInputsPath(input.outPrefix),
    rolloutsPath: `${input.outPrefix}.jsonl`,
    allowPartialRollouts: input.allowPartialRollouts,
    onGroup: (row) => {
      for (const [outcome, n] of Object.entries(countOutcomes([row], input.allowPartialRollouts))) outcomes[outcome as keyof typeof outcomes] += n;
    },
  });
  return {
    rewardProfilingPath: out.rewardProfilingPath,
    agentMetricsPath: out.agentMetricsPath,
    tasks: out.tasks,
    allPass: outcomes.all_pass,
    allFail: outcomes.all_fail,
    mixed: outcomes.mixed,
  };
}
