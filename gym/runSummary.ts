import { accountingProblems, type RolloutAccounting } from './rolloutAccounting';
import type { StageHealth } from './health/stageHealth';

// `run_summary.json`: one file in the run directory that says where everything the run was asked
// for went: each rollout stage's accounting, and each pivot candidate's selection outcome, with
// whether each adds up; and what NeMo Gym 0.7.0's health checks found in each stage's rollouts. Deterministic (no times), so equal runs write equal summaries.

export const RUN_SUMMARY_FILE = 'run_summary.json';

export interface PivotAccounting {
  candidates: number;
  published: number;
  /** Published with fewer local samples than `num_samples` (only with filter.allow_partial). */
  published_partial: number;
  /** Fewer successful local samples than `num_samples` (or none) and not allowed partial: not published. */
  held_back_incomplete: number;
  all_pass: number;
  all_fail: number;
  constant: number;
  /** Mixed, but at or above filter.max_pass_rate. */
  over_ceiling: number;
  over_budget: number;
  /** Mixed and within budget, but dropped to hold filter.max_share. */
  over_share: number;
}

export interface RunSummary {
  run_id: string;
  pipeline_version: string;
  /** Local samples asked for per pivot. */
  num_samples: number;
  allow_partial: boolean;
  stages: Record<string, RolloutAccounting & { adds_up: boolean; problems: string[] }>;
  pivots: PivotAccounting & { adds_up: boolean; published_by_split: Record<string, number> };
  counts: Record<string, number>;
  /** Per rollout stage that ran the health checks: each check's verdict (gym/health/stageHealth.ts). */
  health: Record<string, StageHealth>;
}

/** Every candidate is published or dropped by exactly one rule, and the splits hold every published pivot. */
export function pivotAccountingAddsUp(p: PivotAccounting, publishedBySplit?: Record<string, number>): boolean {
  const dropped =
    p.all_pass + p.all_fail + p.constant + p.held_back_incomplete + p.over_ceiling + p.over_budget + p.over_share;
  const splitTotal = publishedBySplit && Object.values(publishedBySplit).reduce((a, b) => a + b, 0);
  return (
    p.candidates === p.published + dropped &&
    p.published_partial <= p.published &&
    (splitTotal === undefined || splitTotal === p.published)
  );
}

export function buildRunSummary(input: {
  runId: string;
  pipelineVersion: string;
  numSamples: number;
  allowPartial: boolean;
  accounting: Record<string, RolloutAccounting>;
  pivots: PivotAccounting;
  publishedBySplit: Partial<Record<string, number>>;
  counts: Record<string, number>;
  health?: Record<string, StageHealth>;
}): RunSummary {
  const stages = Object.fromEntries(
    Object.entries(input.accounting).map(([stage, a]) => {
      const problems = accountingProblems(a);
      return [stage, { ...a, adds_up: problems.length === 0, problems }];
    }),
  );
  const bySplit = Object.fromEntries(
    Object.entries(input.publishedBySplit).filter((e): e is [string, number] => e[1] !== undefined),
  );
  return {
    run_id: input.runId,
    pipeline_version: input.pipelineVersion,
    num_samples: input.numSamples,
    allow_partial: input.allowPartial,
    stages,
    pivots: {
      ...input.pivots,
      published_by_split: bySplit,
      adds_up: pivotAccountingAddsUp(input.pivots, bySplit),
    },
    counts: Object.fromEntries(Object.entries(input.counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    health: input.health ?? {},
  };
}
