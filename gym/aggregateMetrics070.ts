import { z } from 'zod';
import { aggregateMetricsSchema } from './aggregateMetrics';
import type { EntryValues } from './aggregateMetricsFile';
import type { PyDict, PyValue } from './pythonJson';
import { checkedKey } from './rewardProfile/fromData';
import { profileTables } from './rewardProfile/profile';
import { RolloutNumberKinds } from './rewardProfile/pythonTypes';
import { gym070AgentRows } from './rewardProfile/repeats';
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
const AGENT_SAMPLE = { agent_ref: { name: AGENT } } as unknown as PyValue;

const meanEntries = (row: PyDict) => [...row].filter(([k]) => k.startsWith('mean/'));

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
  const coverage = profile.coverage();
  const coverageEntries: [string, PyValue][] = coverage.get(AGENT) ?? [];
  if (results.masked.size === count) {
    // Every rollout masked: the coverage alone, so no mean over an empty set is ever published.
    return { agentMetrics: new Map(coverageEntries), keyMetrics: new Map(coverageEntries), groups: [], repeats: [] };
  }
  const groups: PyDict[] = [];
  for (const { row, rollouts } of profile.groups(() => AGENT_SAMPLE)) {
    const typed = kinds.groupRow(row, rollouts, AGENT_SAMPLE);
    typed.set(TASK, BigInt(results.task.get(rollouts[0]!)));
    groups.push(typed);
  }
  const agentRows = profile.agents().map((row) => kinds.agentRow(row));
  const { agents, repeats } = gym070AgentRows(agentRows, profile.agentRollouts(), profile.columns, coverage);
  const agentMetrics: PyDict = new Map([...agents[0]!].filter(([k]) => k !== 'agent_ref'));
  agentMetrics.set('num_repeats', BigInt(repeatIndices.size));
  const withoutRef = (row: PyDict): PyDict => new Map([...row].filter(([k]) => k !== 'agent_ref'));
  return {
    agentMetrics,
    keyMetrics: new Map([...meanEntries(agentMetrics), ...coverageEntries]),
    groups,
    repeats: repeats.map(withoutRef),
  };
}

/** The 0.7.0 entry values of one agent's lines (read as often as wanted), named by `environmentServer`. */
export async function entryValues070(
  lines: () => AsyncIterable<string>,
  environmentServer: string,
): Promise<EntryValues> {
  const all: string[] = [];
  for await (const line of lines()) all.push(line);
  const metrics = aggregateMetrics070(all) ?? {
    agentMetrics: new Map(),
    keyMetrics: new Map(),
    groups: [],
    repeats: [],
  };
  return {
    agentMetrics: metrics.agentMetrics,
    keyMetrics: metrics.keyMetrics,
    groups: metrics.groups,
    gym070: { environmentServer, repeats: metrics.repeats },
  };
}

/**
 * The legacy_agent relay 0.7.0 generates for an agent no environment server names
 * (global_config.py legacy_environment_server_name): the agent's type, else a trailing `_agent`,
 * stripped from its name. Without the type only `_agent` is stripped.
 */
export function legacyEnvironmentServerName(agentName: string, agentType?: string): string {
  const removeSuffix = (text: string, suffix: string) =>
    suffix && text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
  const rstrip = (text: string) => text.replace(/_+$/, '');
  let stem =
    agentType === undefined ? agentName : rstrip(removeSuffix(removeSuffix(agentName, `_${agentType}`), agentType));
  if (stem === agentName) stem = rstrip(removeSuffix(agentName, '_agent'));
  return `${stem || agentType || agentName}_environment_server`;
}
