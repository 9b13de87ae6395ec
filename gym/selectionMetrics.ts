import { ACTION_KINDS, type ActionKind, type MaxShare } from './actionMix';
import type { ExpectedAction } from './schemas';
import { pythonFloatRepr, pythonRound } from './pythonJsonDumps';
import { SELECTION_OUTCOMES, type PivotSelection, type SelectionCandidate, type SelectionOutcome } from './selection';
import { trajectoryKey, type Split, type TrajectoryRef } from './validationSplit';

// What happened to every candidate and skipped decision point, broken down the ways an ML engineer
// asks "where did my pivots go?": by action type, tool, depth and the reward of the source rollout.

export interface CandidateSummary extends SelectionCandidate {
  line: number;
  action_type: ExpectedAction['type'];
  /** One entry per call; empty for a message action. */
  tool_names: string[];
  depth: number | null;
  source_reward: number | null;
  /** The source trajectory, when the candidate's provenance names it. */
  trajectory?: TrajectoryRef;
  /** The side of a validation split the candidate's trajectory is on (train when there is no split). */
  split?: Split;
}

/** Counts from stages before publishing; null when the run did not report them. */
export type UpstreamCounts = {
  tasks: number | null;
  rollouts: number | null;
  positive_trajectories: number | null;
  decision_points: number | null;
  /** Decision points identical to an earlier pivot (same prefix, tools and action), kept once. */
  deduped: number | null;
};

/**
 * `mixed` counts every mixed-reward candidate; `over_ceiling`, `over_budget` and `over_share` of
 * them were cut, the rest `published`.
 */
export type PublishCounts = {
  candidates: number;
  skipped: number;
  all_pass: number;
  all_fail: number;
  constant: number;
  mixed: number;
  incomplete: number;
  over_ceiling: number;
  over_budget: number;
  over_share: number;
  published: number;
};

/** The funnel adds up: every candidate is published or dropped by exactly one rule. */
export function publishCountsAddUp(c: PublishCounts): boolean {
  const dropped = c.all_pass + c.all_fail + c.constant + c.incomplete + c.over_ceiling + c.over_budget + c.over_share;
  return (
    c.candidates === c.published + dropped && c.mixed === c.published + c.over_ceiling + c.over_budget + c.over_share
  );
}

/** Published pivots per expected-action kind before the action-mix rule and after it. */
export type ActionMixCounts = { before: Record<ActionKind, number>; after: Record<ActionKind, number> };

export type SplitCounts = OutcomeCounts & { published_trajectories: number; action_mix: ActionMixCounts };

export interface SelectionOptionsUsed {
  max_pivots: number | null;
  allow_partial: boolean;
  max_pass_rate: number | null;
  max_share: MaxShare | null;
  validation_fraction: number | null;
  validation_seed: number | null;
}

export interface CountWithPercent {
  count: number;
  percent: number;
}

/** Per group, outcomes are exclusive: `mixed` here means mixed and within budget, i.e. published. */
export type OutcomeCounts = { candidates: number; published: number } & Record<SelectionOutcome, number>;

export interface SelectionMetrics {
  upstream: UpstreamCounts;
  counts: PublishCounts;
  counts_add_up: boolean;
  outcomes: Record<SelectionOutcome, CountWithPercent>;
  kept: CountWithPercent;
  skipped_by_reason: Record<string, CountWithPercent>;
  by_action_type: Record<string, OutcomeCounts>;
  by_tool_name: Record<string, OutcomeCounts>;
  by_depth_bucket: Record<string, OutcomeCounts>;
  by_source_reward: Record<string, OutcomeCounts>;
  /** Local pass rates in 10 equal bins over [0, 1] (the last bin includes 1.0). */
  local_pass_rate_histogram: { lower: number; upper: number; published: number; dropped: number }[];
  /** Per side of the validation split (train only without one). */
  by_split: Partial<Record<Split, SplitCounts>>;
  options: SelectionOptionsUsed;
}

export const MESSAGE_TOOL_NAME = '(message)';
export const UNKNOWN_GROUP = 'unknown';
const HISTOGRAM_BINS = 10;

function percent(count: number, total: number): number {
  return total === 0 ? 0 : pythonRound((100 * count) / total, 2);
}

/** Depth buckets double in width (0, 1, 2-3, 4-7, ...): pivots get rarer and alike as depth grows. */
export function depthBucket(depth: number | null): string {
  if (depth === null || !Number.isFinite(depth) || depth < 0) return UNKNOWN_GROUP;
  const d = Math.floor(depth);
  if (d <= 1) return String(d);
  const lower = 2 ** Math.floor(Math.log2(d));
  return `${lower}-${2 * lower - 1}`;
}

function depthBucketOrder(bucket: string): number {
  return bucket === UNKNOWN_GROUP ? Infinity : Number(bucket.split('-')[0]);
}

function emptyOutcomeCounts(): OutcomeCounts {
  const counts = { candidates: 0, published: 0 } as OutcomeCounts;
  for (const outcome of SELECTION_OUTCOMES) counts[outcome] = 0;
  return counts;
}

function sortedRecord<T>(map: Map<string, T>, order: (key: string) => number | string = (k) => k): Record<string, T> {
  const keys = [...map.keys()].sort((a, b) => {
    const oa = order(a);
    const ob = order(b);
    if (oa !== ob) return oa < ob ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return Object.fromEntries(keys.map((k) => [k, map.get(k)!]));
}

function tally(groups: Map<string, OutcomeCounts>, key: string, outcome: SelectionOutcome): void {
  let counts = groups.get(key);
  if (!counts) groups.set(key, (counts = emptyOutcomeCounts()));
  counts.candidates += 1;
  counts[outcome] += 1;
  if (outcome === 'mixed') counts.published += 1;
}

export interface SelectionMetricsInput {
  selections: readonly PivotSelection<CandidateSummary>[];
  skipReasons: ReadonlyMap<string, number>;
  upstream: UpstreamCounts;
  options: {
    max_pivots?: number;
    allow_partial?: boolean;
    max_pass_rate?: number;
    max_share?: MaxShare;
    validation_fraction?: number;
    validation_seed?: number;
  };
}

function emptyMix(): Record<ActionKind, number> {
  return Object.fromEntries(ACTION_KINDS.map((kind) => [kind, 0])) as Record<ActionKind, number>;
}

function splitCounts(selections: readonly PivotSelection<CandidateSummary>[], splits: readonly Split[]) {
  const bySplit = new Map(
    splits.map((split) => [
      split,
      { ...emptyOutcomeCounts(), published_trajectories: 0, action_mix: { before: emptyMix(), after: emptyMix() } },
    ]),
  );
  const trajectories = new Map(splits.map((split) => [split, new Set<string>()]));
  for (const { candidate, outcome } of selections) {
    const split = candidate.split ?? 'train';
    const counts = bySplit.get(split)!;
    counts.candidates += 1;
    counts[outcome] += 1;
    if (outcome === 'over_share') counts.action_mix.before[candidate.action_type] += 1;
    if (outcome !== 'mixed') continue;
    counts.published += 1;
    counts.action_mix.before[candidate.action_type] += 1;
    counts.action_mix.after[candidate.action_type] += 1;
    trajectories.get(split)!.add(candidate.trajectory ? trajectoryKey(candidate.trajectory) : candidate.uuid);
  }
  for (const [split, counts] of bySplit) counts.published_trajectories = trajectories.get(split)!.size;
  return Object.fromEntries(bySplit) as Partial<Record<Split, SplitCounts>>;
}

export function computeSelectionMetrics(input: SelectionMetricsInput): SelectionMetrics {
  const { selections } = input;
  const outcomeCounts = emptyOutcomeCounts();
  const byAction = new Map<string, OutcomeCounts>();
  const byTool = new Map<string, OutcomeCounts>();
  const byDepth = new Map<string, OutcomeCounts>();
  const byReward = new Map<string, OutcomeCounts>();
  const histogram = Array.from({ length: HISTOGRAM_BINS }, (_, i) => ({
    lower: pythonRound(i / HISTOGRAM_BINS, 2),
    upper: pythonRound((i + 1) / HISTOGRAM_BINS, 2),
    published: 0,
    dropped: 0,
  }));

  for (const { candidate, outcome, profile } of selections) {
    outcomeCounts[outcome] += 1;
    tally(byAction, candidate.action_type, outcome);
    const tools = candidate.tool_names.length > 0 ? [...new Set(candidate.tool_names)] : [MESSAGE_TOOL_NAME];
    for (const tool of tools) tally(byTool, tool, outcome);
    tally(byDepth, depthBucket(candidate.depth), outcome);
    tally(
      byReward,
      candidate.source_reward === null ? UNKNOWN_GROUP : pythonFloatRepr(candidate.source_reward),
      outcome,
    );
    if (profile?.pass_rate !== null && profile?.pass_rate !== undefined && outcome !== 'incomplete') {
      const bin = Math.min(HISTOGRAM_BINS - 1, Math.max(0, Math.floor(profile.pass_rate * HISTOGRAM_BINS)));
      histogram[bin]![outcome === 'mixed' ? 'published' : 'dropped'] += 1;
    }
  }

  const candidates = selections.length;
  const skipped = [...input.skipReasons.values()].reduce((a, b) => a + b, 0);
  const outcomes = Object.fromEntries(
    SELECTION_OUTCOMES.map((o) => [o, { count: outcomeCounts[o], percent: percent(outcomeCounts[o], candidates) }]),
  ) as Record<SelectionOutcome, CountWithPercent>;
  const skippedByReason = new Map(
    [...input.skipReasons].map(([reason, count]) => [reason, { count, percent: percent(count, skipped) }]),
  );

  const counts: PublishCounts = {
    candidates,
    skipped,
    all_pass: outcomeCounts.all_pass,
    all_fail: outcomeCounts.all_fail,
    constant: outcomeCounts.constant,
    mixed: outcomeCounts.mixed + outcomeCounts.over_ceiling + outcomeCounts.over_budget + outcomeCounts.over_share,
    incomplete: outcomeCounts.incomplete,
    over_ceiling: outcomeCounts.over_ceiling,
    over_budget: outcomeCounts.over_budget,
    over_share: outcomeCounts.over_share,
    published: outcomeCounts.mixed,
  };
  const { options } = input;
  const splits: Split[] = options.validation_fraction ? ['train', 'validation'] : ['train'];

  return {
    upstream: input.upstream,
    counts,
    counts_add_up: publishCountsAddUp(counts),
    outcomes,
    kept: { count: outcomeCounts.mixed, percent: percent(outcomeCounts.mixed, candidates) },
    skipped_by_reason: sortedRecord(skippedByReason, (k) => -skippedByReason.get(k)!.count),
    by_action_type: sortedRecord(byAction),
    by_tool_name: sortedRecord(byTool, (k) => -byTool.get(k)!.candidates),
    by_depth_bucket: sortedRecord(byDepth, depthBucketOrder),
    by_source_reward: sortedRecord(byReward),
    local_pass_rate_histogram: histogram,
    by_split: splitCounts(selections, splits),
    options: {
      max_pivots: options.max_pivots ?? null,
      allow_partial: options.allow_partial ?? false,
      max_pass_rate: options.max_pass_rate ?? null,
      max_share: options.max_share ?? null,
      validation_fraction: options.validation_fraction ?? null,
      validation_seed: options.validation_fraction ? (options.validation_seed ?? null) : null,
    },
  };
}
