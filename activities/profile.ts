import { writeRewardProfile } from '../gym/rewardProfile';
import { countOutcomes } from '../gym/selection';
import { materializedInputsPath } from './chunkIndex';
import type { ProfileResult } from '../contracts/payloads';

/** Reward profiling of a merged stage, exactly as `ng_reward_profile` would write it next to the rollouts. */
export async function profileStage(input: { outPrefix: string; allowPartialRollouts: boolean }): Promise<ProfileResult> {
  // Strict mode failing on missing rollouts throws RewardProfileError: a verdict about the data,
  // which the workflows' retry policy lists as non-retryable.
  const out = await writeRewardProfile({
    materializedInputsPath: materializedInputsPath(input.outPrefix),
    rolloutsPath: `${input.outPrefix}.jsonl`,
    allowPartialRollouts: input.allowPartialRollouts,
  });
  const outcomes = countOutcomes(out.groupLevel, input.allowPartialRollouts);
  return {
    rewardProfilingPath: out.rewardProfilingPath,
    agentMetricsPath: out.agentMetricsPath,
    tasks: out.groupLevel.length,
    allPass: outcomes.all_pass,
    allFail: outcomes.all_fail,
    mixed: outcomes.mixed,
  };
}
