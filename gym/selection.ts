import { z } from 'zod';

// PivotRL keeps a pivot only when the current policy solves it sometimes but not always: the
// learning signal of a pivot grows with the standard deviation of its local reward, so pivots whose
// K samples all pass or all fail carry none and are dropped here. The paper's filter (arXiv
// 2603.21383) also caps the mean, σ̂² > 0 and μ̂ < λ_diff: `max_pass_rate` is that λ_diff.

/** The part of a NeMo Gym `*_reward_profiling.jsonl` row that selection reads. */
export const localProfileRowSchema = z.looseObject({
  _ng_task_index: z.number().int().nonnegative(),
  'mean/reward': z.number().optional(),
  'min/reward': z.number().optional(),
  'max/reward': z.number().optional(),
  num_rollouts: z.number().int().nonnegative(),
  expected_num_rollouts: z.number().int().nonnegative(),
  missing_num_rollouts: z.number().int().nonnegative(),
});
export type LocalProfileRow = z.infer<typeof localProfileRowSchema>;

/** Local reward statistics of one candidate; `task_index` is its 0-based line in candidates.jsonl. */
export interface LocalProfileStats {
  task_index: number;
  pass_rate: number | null;
  min_reward: number | null;
  max_reward: number | null;
  num_samples: number;
  expected_num_samples: number;
  missing_num_samples: number;
}

export function localProfileStats(row: LocalProfileRow): LocalProfileStats {
  return {
    task_index: row._ng_task_index,
    pass_rate: row['mean/reward'] ?? null,
    min_reward: row['min/reward'] ?? null,
    max_reward: row['max/reward'] ?? null,
    num_samples: row.num_rollouts,
    expected_num_samples: row.expected_num_rollouts,
    missing_num_samples: row.missing_num_rollouts,
  };
}

export const SELECTION_OUTCOMES = [
  'mixed',
  'all_pass',
  'all_fail',
  'constant',
  'incomplete',
  'over_ceiling',
  'over_budget',
  'over_share',
] as const;
/**
 * `constant`: every sample got the same reward strictly between 0 and 1 (possible with fractional
 * reward modes); like all-pass and all-fail it has zero reward spread, hence no signal.
 * The last three are mixed pivots dropped by a rule, in the order the rules apply: the pass-rate
 * ceiling, the budget, the action mix (gym/actionMix.ts).
 */
export type SelectionOutcome = (typeof SELECTION_OUTCOMES)[number];

export const selectionOptionsSchema = z.strictObject({
  max_pivots: z.number().int().nonnegative().optional(),
  allow_partial: z.boolean().optional(),
  /** λ_diff: a mixed pivot is kept only when its pass rate is below this. */
  max_pass_rate: z.number().gt(0).lte(1).optional(),
});
export type SelectionOptions = z.infer<typeof selectionOptionsSchema>;

/** What selection needs to know about a candidate: its line index and its provenance uuid. */
export interface SelectionCandidate {
  index: number;
  uuid: string;
}

export interface PivotSelection<C extends SelectionCandidate = SelectionCandidate> {
  candidate: C;
  outcome: SelectionOutcome;
  profile: LocalProfileStats | null;
}

/** What the local profile alone says about a candidate, before any rule drops mixed pivots. */
export type ProfileOutcome = Exclude<SelectionOutcome, 'over_ceiling' | 'over_budget' | 'over_share'>;

/**
 * Outcome of one candidate before the budget applies. A candidate with no profile row had no
 * completed sample (NeMo Gym's partial profiler drops such tasks), so it is incomplete whatever the mode.
 */
export function classifyLocalProfile(
  profile: LocalProfileStats | null | undefined,
  allowPartial = false,
): ProfileOutcome {
  if (!profile || profile.num_samples === 0) return 'incomplete';
  if (profile.missing_num_samples > 0 && !allowPartial) return 'incomplete';
  const { min_reward: min, max_reward: max } = profile;
  if (min === null || max === null || profile.pass_rate === null) return 'incomplete';
  if (min >= 1) return 'all_pass';
  if (max <= 0) return 'all_fail';
  if (min === max) return 'constant';
  return 'mixed';
}

/**
 * Per-task outcomes of a reward profile's group-level rows (the collect stage's view of its tasks),
 * with the same rule selection applies to local profiles.
 */
export function countOutcomes(
  groupLevelRows: readonly unknown[],
  allowPartial: boolean,
): Record<ProfileOutcome, number> {
  const counts = { mixed: 0, all_pass: 0, all_fail: 0, constant: 0, incomplete: 0 };
  for (const row of groupLevelRows)
    counts[classifyLocalProfile(localProfileStats(localProfileRowSchema.parse(row)), allowPartial)]++;
  return counts;
}

/** Hardest first (lowest pass rate), so a rule that drops from the end drops the easiest. */
export function compareKeepPriority(a: PivotSelection, b: PivotSelection): number {
  const rateA = a.profile?.pass_rate ?? 0;
  const rateB = b.profile?.pass_rate ?? 0;
  if (rateA !== rateB) return rateA - rateB;
  if (a.candidate.uuid !== b.candidate.uuid) return a.candidate.uuid < b.candidate.uuid ? -1 : 1;
  return a.candidate.index - b.candidate.index;
}

/**
 * Classifies every candidate, drops mixed pivots at or above `max_pass_rate` and, with
 * `max_pivots`, drops the easiest mixed pivots left (highest local pass rate) until the budget holds. Ties keep the smaller uuid, then the smaller index, so the
 * result depends only on the inputs. Results come back in candidate order.
 */
export function selectPivots<C extends SelectionCandidate>(
  candidates: readonly C[],
  profiles: ReadonlyMap<number, LocalProfileStats> | Iterable<LocalProfileStats>,
  opts: SelectionOptions = {},
): PivotSelection<C>[] {
  const options = selectionOptionsSchema.parse(opts);
  const byIndex =
    profiles instanceof Map
      ? (profiles as ReadonlyMap<number, LocalProfileStats>)
      : new Map([...(profiles as Iterable<LocalProfileStats>)].map((p) => [p.task_index, p] as const));

  const selections: PivotSelection<C>[] = candidates.map((candidate) => {
    const profile = byIndex.get(candidate.index) ?? null;
    return { candidate, profile, outcome: classifyLocalProfile(profile, options.allow_partial ?? false) };
  });

  const ceiling = options.max_pass_rate;
  if (ceiling !== undefined) {
    for (const s of selections)
      if (s.outcome === 'mixed' && s.profile!.pass_rate! >= ceiling) s.outcome = 'over_ceiling';
  }
  if (options.max_pivots !== undefined) {
    const mixed = selections.filter((s) => s.outcome === 'mixed').sort(compareKeepPriority);
    for (const dropped of mixed.slice(options.max_pivots)) dropped.outcome = 'over_budget';
  }
  return selections;
}
