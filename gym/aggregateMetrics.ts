import path from 'node:path';
import { z } from 'zod';
import { prepareForSerialization, profileFromData } from './rewardProfile/profile';

// NeMo Gym's `/aggregate_metrics` contract (nemo_gym/config_types.py AggregateMetricsRequest /
// AggregateMetrics) and the default computation every NeMo Gym resources server and agent answers it
// with (nemo_gym/reward_profile.py compute_aggregate_metrics with AggregateMetricsMixin's default
// hooks), plus the file `ng_collect_rollouts` writes from the answers
// (rollout_collection.py RolloutCollectionHelper._call_aggregate_metrics).

type Row = Record<string, unknown>;

const TASK = '_ng_task_index';
const ROLLOUT = '_ng_rollout_index';

export const aggregateMetricsRequestSchema = z.object({ verify_responses: z.array(z.looseObject({})) });
export type AggregateMetricsRequest = z.infer<typeof aggregateMetricsRequestSchema>;

/** Pydantic fills missing fields with empty defaults and ignores unknown ones; so do we. */
export const aggregateMetricsSchema = z.object({
  group_level_metrics: z.array(z.record(z.string(), z.unknown())).default([]),
  agent_metrics: z.record(z.string(), z.unknown()).default({}),
  key_metrics: z.record(z.string(), z.unknown()).default({}),
});
export type AggregateMetrics = z.infer<typeof aggregateMetricsSchema>;

/** One entry of `<stem>_aggregate_metrics.json`, keys in the order NeMo Gym writes them. */
export interface AggregateMetricsEntry {
  agent_ref: { name: string };
  agent_metrics: Row;
  key_metrics: Row;
  group_level_metrics: Row[];
}

function isRow(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python truthiness of a parsed JSON value (empty containers and strings are false). */
export function pythonTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isRow(value)) return Object.keys(value).length > 0;
  return true;
}

/**
 * What `_call_aggregate_metrics` sends per rollout: everything but the heavyweight `response` and
 * `responses_create_params`, with `response.usage` kept (appended last) when it is non-empty.
 */
export function stripForAggregateMetrics(result: Row): Row {
  const entry: Row = {};
  for (const [k, v] of Object.entries(result)) if (k !== 'response' && k !== 'responses_create_params') entry[k] = v;
  const usage = isRow(result.response) ? result.response.usage : undefined;
  if (pythonTruthy(usage)) entry.response = { usage };
  return entry;
}

/**
 * Only what the computation reads of a verify response: numeric and boolean fields, `reward`, and
 * `response.usage`. Everything else never reaches a column, so dropping it early changes no output
 * and keeps memory to a few numbers per rollout.
 */
export function numericView(result: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(result)) {
    if (k === 'response') out.response = isRow(v) && isRow(v.usage) ? { usage: v.usage } : {};
    else if (k === 'reward' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

/**
 * compute_aggregate_metrics with the default hooks: the RewardProfiler run over every verify response
 * as one agent named "agent" (missing indices count as 0, a missing `response` as `{}`),
 * `compute_metrics` adding nothing, and the `mean/*` entries as key metrics.
 */
export function computeAggregateMetrics(verifyResponses: readonly Row[]): AggregateMetrics {
  if (verifyResponses.length === 0) return { group_level_metrics: [], agent_metrics: {}, key_metrics: {} };
  const rows: Row[] = [];
  const results: Row[] = [];
  for (const vr of verifyResponses) {
    const view = numericView(vr);
    const task = vr[TASK] ?? 0;
    const rollout = vr[ROLLOUT] ?? 0;
    rows.push({ [TASK]: task, [ROLLOUT]: rollout, agent_ref: { name: 'agent' } });
    results.push('response' in view ? view : { ...view, response: {} });
  }
  const { groupLevel, agentLevel } = profileFromData(rows, results, false);

  const agentMetrics: Row = {};
  for (const entry of agentLevel) for (const [k, v] of Object.entries(entry)) if (k !== 'agent_ref') agentMetrics[k] = v;
  const groupLevelMetrics = prepareForSerialization(groupLevel) as Row[];
  const agent = Object.keys(agentMetrics).length > 0 ? (prepareForSerialization([agentMetrics])[0] as Row) : {};
  const keyMetrics = Object.fromEntries(Object.entries(agent).filter(([k]) => k.startsWith('mean/')));
  return { group_level_metrics: groupLevelMetrics, agent_metrics: agent, key_metrics: keyMetrics };
}

export function aggregateMetricsEntry(agentName: string, metrics: AggregateMetrics): AggregateMetricsEntry {
  return {
    agent_ref: { name: agentName },
    agent_metrics: metrics.agent_metrics,
    key_metrics: metrics.key_metrics,
    group_level_metrics: metrics.group_level_metrics,
  };
}

/** Upstream's `output_fpath.with_stem(stem + "_aggregate_metrics").with_suffix(".json")`. */
export function aggregateMetricsPath(rolloutsPath: string): string {
  const { dir, name } = path.parse(rolloutsPath);
  return path.join(dir, `${name}_aggregate_metrics.json`);
}

/** orjson's OPT_INDENT_2 layout (two-space indent, `": "` after keys); integral floats print as integers. */
export function formatAggregateMetricsFile(entries: readonly AggregateMetricsEntry[]): string {
  return JSON.stringify(entries, null, 2);
}
