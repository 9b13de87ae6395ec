import path from 'node:path';
import { z } from 'zod';
import { jsonText } from './jsonl';
import { dictGet, isJsonDict, parseKinded, type JsonDict } from './kindedJson';
import type { PyDict, PyValue } from './pythonJson';
import { checkedKey } from './rewardProfile/fromData';
import {
  NotInKeyOrder,
  profileKeyOrdered,
  type ProfiledInput,
  type ProfiledResult,
  type ProfileSources,
  type StreamedProfile,
} from './rewardProfile/stream';
import { profileTables, type ProfiledGroup } from './rewardProfile/profile';
import { RolloutNumberKinds } from './rewardProfile/pythonTypes';
import { InputTable, isRow, pythonTruthy, ROLLOUT, RolloutTable, TASK } from './rewardProfile/table';
export { pythonTruthy } from './rewardProfile/table';
import type { EntryValues } from './aggregateMetricsFile';
import { ROLLOUT_OBSERVATION_FIELDS } from './rolloutObservations';

// NeMo Gym's `/aggregate_metrics` contract (nemo_gym/config_types.py AggregateMetricsRequest /
// AggregateMetrics) and the default computation every NeMo Gym resources server and agent answers it
// with (nemo_gym/reward_profile.py compute_aggregate_metrics with AggregateMetricsMixin's default
// hooks), plus the file `ng_collect_rollouts` writes from the answers
// (rollout_collection.py RolloutCollectionHelper._call_aggregate_metrics).

type Row = Record<string, unknown>;

export const aggregateMetricsRequestSchema = z.object({ verify_responses: z.array(z.looseObject({})) });
export type AggregateMetricsRequest = z.infer<typeof aggregateMetricsRequestSchema>;

/** Pydantic fills missing fields with empty defaults and ignores unknown ones; so do we. */
export const aggregateMetricsSchema = z.object({
  group_level_metrics: z.array(z.record(z.string(), z.unknown())).default([]),
  agent_metrics: z.record(z.string(), z.unknown()).default({}),
  key_metrics: z.record(z.string(), z.unknown()).default({}),
});
export type AggregateMetrics = z.infer<typeof aggregateMetricsSchema>;

/** Left out of an `/aggregate_metrics` entry (`response` comes back as its metadata alone). */
export const strippedForAggregateMetrics = (key: string): boolean =>
  key === 'response' || key === 'responses_create_params' || ROLLOUT_OBSERVATION_FIELDS.has(key);

/** The `response` keys 0.7.0's `_fetch_agent_metrics` keeps, in its order, each when it is not None. */
export const RESPONSE_METADATA_KEYS = ['usage', 'incomplete_details'] as const;

/** Whose `/aggregate_metrics` entry: their `_call_aggregate_metrics` differ in what `response` keeps. */
export type EntryRelease = '0.7.0' | '0.4.0';

/**
 * What NeMo Gym sends per rollout: everything but the heavyweight `response`,
 * `responses_create_params` and observability fields, with `response` appended last as what it keeps
 * of it (responseMetadata), when anything. Of the same kind as `result`, so a PyDict keeps its
 * Python number kinds. Stripping an entry again gives the entry, so 0.4.0's can be made from 0.7.0's.
 */
export function stripForAggregateMetrics<T extends JsonDict>(result: T, release?: EntryRelease): T;
export function stripForAggregateMetrics(result: JsonDict, release: EntryRelease = '0.7.0'): JsonDict {
  const response = dictGet(result, 'response');
  const kept = isJsonDict(response) ? responseMetadata(response, release) : [];
  if (result instanceof Map) {
    const entry: PyDict = new Map();
    for (const [k, v] of result) if (!strippedForAggregateMetrics(k)) entry.set(k, v);
    if (kept.length > 0) entry.set('response', new Map(kept));
    return entry;
  }
  const entry: Row = {};
  for (const [k, v] of Object.entries(result)) if (!strippedForAggregateMetrics(k)) entry[k] = v;
  // A PyDict response stays one, so the writer still sees its kinds.
  if (kept.length > 0) entry.response = response instanceof Map ? new Map(kept) : Object.fromEntries(kept);
  return entry;
}

/**
 * 0.7.0's `_fetch_agent_metrics` keeps `usage` and `incomplete_details`, each when not None; 0.4.0's
 * `_call_aggregate_metrics` kept `usage` alone, when truthy.
 */
function responseMetadata(response: JsonDict, release: EntryRelease): [string, PyValue][] {
  const usage = dictGet(response, 'usage') as PyValue | undefined;
  if (release === '0.4.0') return pythonTruthy(usage) ? [['usage', usage!]] : [];
  return RESPONSE_METADATA_KEYS.flatMap((k): [string, PyValue][] => {
    const value = dictGet(response, k);
    return value === undefined || value === null ? [] : [[k, value as PyValue]];
  });
}

/** NeMo Gym 0.4.0's entry from 0.7.0's entry `line` (a digest), decoded only when it has a `response`. */
export function entryFor040(line: string): string {
  if (!line.includes('"response":')) return line;
  return jsonText(stripForAggregateMetrics(parseKinded(line).kinded as JsonDict, '0.4.0'));
}

/**
 * A completed rollout as every stage after collection reads it: its `/aggregate_metrics` entry as
 * orjson writes it, which holds all reward profiling takes from a rollout too (the keys, the
 * top-level numbers, `response.usage`), in a few hundred bytes where the rollout line holds the whole
 * trajectory. Null when `response` is not an object: profiling must then report the rollout line
 * itself, so it reads the rollouts file.
 */
export function rolloutDigest(result: JsonDict): string | null {
  return isJsonDict(dictGet(result, 'response')) ? jsonText(stripForAggregateMetrics(result)) : null;
}

/**
 * What a reader of the digests throws at one that cannot stand in for its rollout (a null digest,
 * or keys that are not indices); whoever called the reader then reads the rollouts file instead.
 */
export class NoDigest extends Error {}

/**
 * compute_aggregate_metrics with the default hooks, over verify responses added one at a time: the
 * RewardProfiler run over them as one agent named "agent" (missing indices count as 0 in the rows, a
 * missing `response` as `{}`), `compute_metrics` adding nothing, and the `mean/*` entries as key
 * metrics. Responses are kept as columns, and group rows are built as they are read.
 */
export class VerifyResponses {
  private readonly inputs = new InputTable();
  private readonly results = new RolloutTable();
  private readonly kinds = new RolloutNumberKinds();
  private count = 0;

  /** `text`, the response's line in the rollouts file, gives its numbers their Python types. */
  add(verifyResponse: Row, text?: string): void {
    const vr = checkedKey(verifyResponse, 'Rollout result', this.count++);
    this.inputs.add(vr[TASK], vr[ROLLOUT], 'agent');
    const i = this.results.add(vr[TASK], vr[ROLLOUT], isRow(vr.response) ? vr : { ...vr, response: {} });
    if (text !== undefined) this.kinds.add(i, text);
  }

  /** The metrics as plain values, which is what an agent answers (numbers lose Python's int/float). */
  metrics(): AggregateMetrics {
    const { agentMetrics, groups } = this.profile();
    const group_level_metrics = [...groups].map((g) => g.row);
    return { group_level_metrics, agent_metrics: agentMetrics, key_metrics: keyMetrics(agentMetrics) };
  }

  /** The metrics as Python values, group rows built one at a time: what NeMo Gym writes to its file. */
  typedMetrics(): EntryValues {
    const { agentMetrics, groups } = this.profile();
    const typedAgent = this.kinds.agentRow(agentMetrics);
    const kinds = this.kinds;
    return {
      agentMetrics: typedAgent,
      keyMetrics: new Map([...typedAgent].filter(([k]) => k.startsWith('mean/'))),
      groups: (function* () {
        for (const { row, rollouts } of groups) yield kinds.groupRow(row, rollouts, row.sample as PyValue);
      })(),
    };
  }

  private profile(): { agentMetrics: Row; groups: Iterable<ProfiledGroup> } {
    if (this.count === 0) return { agentMetrics: {}, groups: [] };
    const profile = profileTables(this.inputs, this.results, false);
    const agentMetrics: Row = {};
    for (const entry of profile.agents())
      for (const [k, v] of Object.entries(entry)) if (k !== 'agent_ref') agentMetrics[k] = v;
    return { agentMetrics, groups: profile.groups(() => AGENT_SAMPLE) };
  }
}

function keyMetrics(agentMetrics: Row): Row {
  return Object.fromEntries(Object.entries(agentMetrics).filter(([k]) => k.startsWith('mean/')));
}

/** What VerifyResponses gives a group row as its sample: one agent, named "agent". */
const AGENT_SAMPLE = { agent_ref: { name: 'agent' } };

/**
 * Entry lines (read as many times as wanted) as reward profile sources, as compute_aggregate_metrics
 * profiles them: each rollout its own input row of one agent named "agent", a missing `response`
 * profiled as an empty one. `onRollout` sees each rollout index read.
 */
export function verifyResponseSources(
  lines: () => AsyncIterable<string>,
  onRollout: (rollout: number) => void = () => undefined,
): ProfileSources {
  async function* results(): AsyncGenerator<ProfiledResult> {
    let position = 0;
    for await (const text of lines()) {
      const vr = checkedKey(JSON.parse(text), 'Rollout result', position++);
      onRollout(vr[ROLLOUT]);
      yield { task: vr[TASK], rollout: vr[ROLLOUT], result: isRow(vr.response) ? vr : { ...vr, response: {} }, text };
    }
  }
  async function* inputs(): AsyncGenerator<ProfiledInput> {
    for await (const { task, rollout } of results())
      yield { task, rollout, agentName: 'agent', byteOffset: 0, byteLength: 0 };
  }
  return { results, inputs };
}

/**
 * VerifyResponses' typed metrics over entry lines read as many times as wanted: a task at a time when
 * they come in key order (an agent's entries of a merged stage do), in tables otherwise.
 */
export async function typedAggregateMetrics(lines: () => AsyncIterable<string>): Promise<EntryValues> {
  let profile: StreamedProfile;
  try {
    profile = await profileKeyOrdered(verifyResponseSources(lines), false);
  } catch (err) {
    if (!(err instanceof NotInKeyOrder)) throw err;
    const responses = new VerifyResponses();
    for await (const text of lines()) responses.add(JSON.parse(text) as Row, text);
    return responses.typedMetrics();
  }
  const agentMetrics: PyDict = new Map([...(profile.agents()[0] ?? [])].filter(([k]) => k !== 'agent_ref'));
  async function* groups(): AsyncGenerator<PyDict> {
    for await (const { typed } of profile.groups(async () => AGENT_SAMPLE as unknown as PyValue)) yield typed;
  }
  return {
    agentMetrics,
    keyMetrics: new Map([...agentMetrics].filter(([k]) => k.startsWith('mean/'))),
    groups: groups(),
  };
}

/** What a NeMo Gym 0.4.0 resources server answers by default: how an agent of that release answers. */
export function computeAggregateMetrics(verifyResponses: readonly Row[]): AggregateMetrics {
  const responses = new VerifyResponses();
  for (const vr of verifyResponses) responses.add(vr);
  return responses.metrics();
}

/** Upstream's `output_fpath.with_stem(stem + "_aggregate_metrics").with_suffix(".json")`. */
export function aggregateMetricsPath(rolloutsPath: string): string {
  const { dir, name } = path.parse(rolloutsPath);
  return path.join(dir, `${name}_aggregate_metrics.json`);
}
