import { writeAggregateMetrics } from './aggregateMetrics';
import { finishMerge } from './merge';
import { profileStage } from './profile';
import type { MergeProgress, MergeResult, ProfileResult, RolloutStage, RunPlan } from '../contracts/payloads';

/**
 * From this many completed rollouts on, the reward profile and the aggregate metrics run one after
 * the other. Each holds its columns (a few bytes per rollout) while it reads; overlapped, both sets
 * are live at once: at a million rollouts the tail peaked at 208 MB overlapped and 191 MB in turn
 * (`npx tsx scripts/bench/profileStageMemory.ts`), for 7% more time on a tail that runs once. Below
 * it the overlap is worth more than the memory: on a short stage the aggregate metrics mostly wait
 * on the agent servers, and the tail is a visible share of the stage's time.
 */
export const SEQUENTIAL_TAIL_FROM_ROLLOUTS = 50_000;

/** The reward profile and the aggregate metrics of a merged stage, overlapped only where memory is no concern. */
export async function profileWithAggregateMetrics(input: {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
  rolloutsPath: string;
  completed: number;
  allowPartialRollouts: boolean;
}): Promise<ProfileResult> {
  const profile = () => profileStage({ outPrefix: input.outPrefix, allowPartialRollouts: input.allowPartialRollouts });
  const aggregate = () => writeAggregateMetrics({ plan: input.plan, stage: input.stage, rolloutsPath: input.rolloutsPath });
  if (input.completed >= SEQUENTIAL_TAIL_FROM_ROLLOUTS) {
    const result = await profile();
    await aggregate();
    return result;
  }
  const [result] = await Promise.all([profile(), aggregate()]);
  return result;
}

/**
 * The tail of a collect stage after its last chunk, as one activity: the rest of the merge, then
 * reward profiling and the aggregate metrics (both read only the merged digests). One activity
 * rather than three saves the workflow round trips between them, which on a short stage cost as
 * much as the work. Each part is idempotent, so a retry redoes them whole.
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
  const profile = await profileWithAggregateMetrics({ plan, stage, outPrefix, rolloutsPath: merge.rolloutsPath, completed: merge.completed, allowPartialRollouts: input.allowPartialRollouts });
  return { merge, profile };
}
