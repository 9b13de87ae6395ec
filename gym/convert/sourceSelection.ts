import { z } from 'zod';
import { readJsonlRows } from './lineReader';
import { ConvertInputError } from '../errors';
import type { Trajectory } from './trajectory';

export const SOURCE_PREFERENCES = ['prefer_mixed', 'require_mixed', 'off'] as const;
export type SourcePreference = (typeof SOURCE_PREFERENCES)[number];

/** The fields of a `*_reward_profiling.jsonl` row that source selection reads. */
const rewardProfileRowSchema = z.looseObject({
  _ng_task_index: z.number().int().nonnegative(),
  'min/reward': z.number().optional(),
  'max/reward': z.number().optional(),
});

/**
 * Task index → whether its rollout group had mixed rewards (min below max), from a reward profile.
 * A group whose min or max reward is absent has no known spread and counts as not mixed.
 */
export async function readRewardProfile(file: string): Promise<Map<number, boolean>> {
  const mixed = new Map<number, boolean>();
  for await (const { line, row } of readJsonlRows(file)) {
    const parsed = rewardProfileRowSchema.safeParse(row);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConvertInputError(
        file,
        line,
        `not a reward profile row: ${issue.path.join('.') || 'row'}: ${issue.message}`,
      );
    }
    const { 'min/reward': min, 'max/reward': max } = parsed.data;
    mixed.set(parsed.data._ng_task_index, min !== undefined && max !== undefined && min < max);
  }
  return mixed;
}

/** Reward spread of source task groups seen in the inputs, for when no reward profile is given. */
export class TaskRewardSpread {
  private readonly spread = new Map<string, { min: number; max: number }>();

  add(taskKey: string, reward: number | null): void {
    if (reward === null) return;
    const seen = this.spread.get(taskKey);
    this.spread.set(
      taskKey,
      seen ? { min: Math.min(seen.min, reward), max: Math.max(seen.max, reward) } : { min: reward, max: reward },
    );
  }

  isMixed(taskKey: string): boolean {
    const seen = this.spread.get(taskKey);
    return seen !== undefined && seen.min < seen.max;
  }
}

/** A clean positive source: no error or truncation, and a reward at least the minimum. */
export function isCleanPositive(trajectory: Trajectory, minSourceReward: number): boolean {
  return trajectory.uncleanReason === undefined && trajectory.reward !== null && trajectory.reward >= minSourceReward;
}

/** How many ordered tiers a preference makes (tasks of tier 0 are written first). */
export function tierCount(preference: SourcePreference): number {
  return preference === 'prefer_mixed' ? 2 : 1;
}

/** The output tier of a task, or null when the preference excludes it. */
export function taskTier(preference: SourcePreference, mixed: boolean): number | null {
  if (preference === 'off') return 0;
  if (preference === 'require_mixed') return mixed ? 0 : null;
  return mixed ? 0 : 1;
}
