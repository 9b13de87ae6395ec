import { z } from 'zod';
import { aggregateMetricsSchema } from './aggregateMetrics';
import type { PyDict, PyValue } from './pythonJson';
import { checkedKey } from './rewardProfile/fromData';
import { profileTables } from './rewardProfile/profile';
import { RolloutNumberKinds } from './rewardProfile/pythonTypes';
import type { CoverageEntries } from './rewardProfile/coverage';
import { gym070AgentRows, type AgentRollouts } from './rewardProfile/repeats';
import { InputTable, isRow, ROLLOUT, RolloutTable, TASK } from './rewardProfile/table';

// NeMo Gym 0.7.0's default `/aggregate_metrics` answer (nemo_gym/reward_profile.py
// compute_aggregate_metrics with AggregateMetricsMixin's default hooks), which an agent or its
// legacy_agent relay gives `gym eval aggregate` and `ng_collect_rollouts` for their
// `<stem>_aggregate_metrics.json`. Over 0.4.0's answer it leaves masked samples out of every
// statistic and reports them as `coverage/*`, adds the `*_across_repeats/*` aggregates and a
// `num_repeats` count, names each group's `_ng_task_index`, and answers repeat-level metrics.

/** 0.7.0's AggregateMetrics answer: 0.4.0's, plus repeat-level metrics and an optional perf summary. */
export const aggregateMetrics070Schema = aggregateMetricsSchema.extend({
  repeat_level_metrics: z.array(z.record(z.string(), z.unknown())).default([]),
  perf_summary: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** One entry's values as 0.7.0 answers them, with Python's number kinds. */
export interface Metrics070 {
  agentMetrics: PyDict;
  keyMetrics: PyDict;
  groups: PyDict[];
  repeats: PyDict[];
}

/** What compute_aggregate_metrics names the one agent it profiles (its rows are synthetic). */
const AGENT = 'agent';
export const AGENT_SAMPLE = { agent_ref: { name: AGENT } } as unknown as PyValue;

/**
 * The metrics of one agent's verify responses (each the line of its rollout or of its stripped
 * entry, whose numbers keep their Python types), or undefined for none: 0.7.0 writes no entry then.
 */
export function aggregateMetrics070(lines: Iterable<string>): Metrics070 | undefined {
  const inputs = new InputTable();
  const results = new RolloutTable();
  const kinds = new RolloutNumberKinds();
  const repeatIndices = new Set<number>();
  let count = 0;
  for (const text of lines) {
    const vr = checkedKey(JSON.parse(text), 'Rollout result', count++);
    inputs.add(vr[TASK], vr[ROLLOUT], AGENT);
    // A missing `response` is profiled as an empty one, as compute_aggregate_metrics fills it.
    const i = results.add(vr[TASK], vr[ROLLOUT], isRow(vr.response) ? vr : { ...vr, response: {} });
    // A masked rollout is no part of the stats frame, so its number kinds decide nothing.
    if (!results.masked.has(i)) kinds.add(i, text);
    repeatIndices.add(vr[ROLLOUT]);
  }
  if (count === 0) return undefined;
  const profile = profileTables(inputs, results, false);
  const groups: PyDict[] = [];
  for (const { row, rollouts } of profile.groups(() => AGENT_SAMPLE)) {
    const typed = kinds.groupRow(row, rollouts, AGENT_SAMPLE);
    typed.set(TASK, BigInt(results.task.get(rollouts[0]!)));
    groups.push(typed);
  }
  const agentRows = profile.agents().map((row) => kinds.agentRow(row));
  return { ...agentEntries070({ ...profile, agentRows }, repeatIndices.size), groups };
}

/** What a profile of the one agent gives 0.7.0's entry besides its group rows. */
export interface AgentProfile070 {
  agentRows: PyDict[];
  agentRollouts(): AgentRollouts[];
  columns: readonly string[];
  coverage(): Map<string, CoverageEntries>;
}

/**
 * The agent metrics, key metrics and repeat rows of 0.7.0's answer; with no measured rollout (every
 * one masked) the coverage alone, so no mean over an empty set is ever published.
 */
export function agentEntries070(profile: AgentProfile070, repeatCount: number): Omit<Metrics070, 'groups'> {
  const coverage = profile.coverage();
  const coverageEntries: [string, PyValue][] = coverage.get(AGENT) ?? [];
  if (profile.agentRows.length === 0)
    return { agentMetrics: new Map(coverageEntries), keyMetrics: new Map(coverageEntries), repeats: [] };
  const { agents, repeats } = gym070AgentRows(profile.agentRows, profile.agentRollouts(), profile.columns, coverage);
  const agentMetrics: PyDict = new Map([...agents[0]!].filter(([k]) => k !== 'agent_ref'));
  agentMetrics.set('num_repeats', BigInt(repeatCount));
  return {
    agentMetrics,
    keyMetrics: new Map([...agentMetrics].filter(([k]) => k.startsWith('mean/')).concat(coverageEntries)),
    repeats: repeats.map((row) => new Map([...row].filter(([k]) => k !== 'agent_ref'))),
  };
}
