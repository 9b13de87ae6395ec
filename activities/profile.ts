import { ApplicationFailure } from '@temporalio/common';
import { writeRewardProfile } from '../gym/rewardProfile';
import { materializedInputsPath } from './chunkIndex';
import type { ProfileResult } from '../workflows/types';

/** Reward profiling of a merged stage, exactly as `ng_reward_profile` would write it next to the rollouts. */
export async function profileStage(input: { outPrefix: string; allowPartialRollouts: boolean }): Promise<ProfileResult> {
  let out;
  try {
    out = await writeRewardProfile({
      materializedInputsPath: materializedInputsPath(input.outPrefix),
      rolloutsPath: `${input.outPrefix}.jsonl`,
      allowPartialRollouts: input.allowPartialRollouts,
    });
  } catch (err) {
    // Strict mode failing on missing rollouts is a verdict about the data, not a transient fault.
    if (err instanceof Error && /rollout/i.test(err.message)) throw ApplicationFailure.nonRetryable(err.message, 'RewardProfileError');
    throw err;
  }
  let allPass = 0;
  let allFail = 0;
  let mixed = 0;
  for (const row of out.groupLevel as Array<Record<string, unknown>>) {
    if (row['min/reward'] === 1) allPass++;
    else if (row['max/reward'] === 0) allFail++;
    else mixed++;
  }
  return {
    rewardProfilingPath: out.rewardProfilingPath,
    agentMetricsPath: out.agentMetricsPath,
    tasks: out.groupLevel.length,
    allPass,
    allFail,
    mixed,
  };
}
