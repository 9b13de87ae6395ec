import { writeAggregateMetrics } from './aggregateMetrics';
import { finishMerge } from './merge';
import { profileStage } from './profile';
import type { MergeProgress, MergeResult, ProfileResult, RolloutStage, RunPlan } from '../contracts/payloads';

/**
 * The tail of a collect stage after its last chunk, as one activity: the rest of the merge, then
 * reward profiling beside the aggregate metrics (both read only the merged digests, and aggregate
 * metrics mostly wait on the agent servers). One activity rather than three saves the workflow
 * round trips between them, which on a short stage cost as much as the work. Each part is
 * idempotent, so a retry redoes them whole.
 */
export async function finishStage(input: {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
  merged?: MergeProgress;
  allowPartialRollouts: boolean;
}): Promise<{ merge: MergeResult; profile: ProfileResult }> {
  const { plan, stage, outPrefix } = input;
  const merge = await finishMerge({ outPrefix, from: input.merged });
  const [profile] = await Promise.all([
    profileStage({ outPrefix, allowPartialRollouts: input.allowPartialRollouts }),
    writeAggregateMetrics({ plan, stage, rolloutsPath: merge.rolloutsPath }),
  ]);
  return { merge, profile };
}
