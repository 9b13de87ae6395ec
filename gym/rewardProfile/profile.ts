import { describeGroup, type Cell, type StatValue } from './stats';
import { RewardProfileError } from '../errors';

// NeMo Gym's RewardProfiler (`profile_from_data`, `profile_completion_summary`,
// `prepare_for_serialization`) over in-memory rows: the materialized inputs and the rollout results,
// aligned by (`_ng_task_index`, `_ng_rollout_index`). Error messages are upstream's, word for word,
// because users search for them.

type Row = Record<string, unknown>;

export interface CompletionSummary {
  expected_rollout_rows: number;
  completed_rollout_rows: number;
  missing_rollout_rows: number;
  extra_rollout_rows: number;
  reward_profile_completion_pct: number;
  total_input_rows: number;
  complete_input_rows: number;
  partial_input_rows: number;
  missing_input_rows: number;
}

export type GroupLevelMetrics = Record<string, unknown>;
export type AgentLevelMetrics = Record<string, unknown>;

const TASK = '_ng_task_index';
const ROLLOUT = '_ng_rollout_index';
const MAX_KEYS_SHOWN = 10;

interface Keyed {
  task: number;
  rollout: number;
  value: Row;
  /** Index in the caller's array, for error messages. */
  position: number;
}

function isRow(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keyed(value: unknown, what: string, position: number): Keyed {
  if (!isRow(value)) throw new RewardProfileError(`${what} ${position} is not a JSON object`);
  for (const key of [TASK, ROLLOUT]) {
    if (!(key in value)) throw new RewardProfileError(`${what} ${position} has no '${key}'`);
    if (!Number.isInteger(value[key])) throw new RewardProfileError(`${what} ${position}: '${key}' must be an integer`);
  }
  return { task: value[TASK] as number, rollout: value[ROLLOUT] as number, value, position };
}

const mapKey = (task: number, rollout: number): string => `${task},${rollout}`;
const pythonTuple = (k: Keyed): string => `(${k.task}, ${k.rollout})`;
const byKey = (a: Keyed, b: Keyed): number => a.task - b.task || a.rollout - b.rollout;

function keyList(keys: Keyed[]): string {
  return `[${[...keys].sort(byKey).slice(0, MAX_KEYS_SHOWN).map(pythonTuple).join(', ')}]`;
}

function indexUnique(items: readonly unknown[], what: string, duplicateLabel: string): Map<string, Keyed> {
  const map = new Map<string, Keyed>();
  items.forEach((item, i) => {
    const k = keyed(item, what, i);
    const id = mapKey(k.task, k.rollout);
    if (map.has(id)) throw new RewardProfileError(`Duplicate ${duplicateLabel} for rollout key ${pythonTuple(k)}`);
    map.set(id, k);
  });
  return map;
}

/** Python's default string order (code points), which differs from UTF-16 order above the BMP. */
function comparePython(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const d = ca[i]!.codePointAt(0)! - cb[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

function numericOrUndefined(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  return typeof v === 'number' ? v : undefined;
}

function usageOf(result: Keyed): Row {
  const response = result.value.response;
  if (!isRow(response)) throw new RewardProfileError(`Rollout result ${result.position} has no 'response' object`);
  return isRow(response.usage) ? response.usage : {};
}

function agentNameOf(row: Row): unknown {
  const ref = row.agent_ref;
  if (!isRow(ref) || !('name' in ref)) {
    throw new RewardProfileError(`Materialized input row for rollout key (${String(row[TASK])}, ${String(row[ROLLOUT])}) has no 'agent_ref.name'`);
  }
  return ref.name;
}

/** One rollout's numeric columns: result fields merged with usage fields (usage wins), bool → 0/1. */
function numericRecord(row: Row, result: Keyed): Map<string, unknown> {
  const record = new Map<string, unknown>([
    ['agent_name', agentNameOf(row)],
    [TASK, result.task],
    [ROLLOUT, result.rollout],
  ]);
  for (const [k, v] of Object.entries({ ...result.value, ...usageOf(result) })) {
    const n = numericOrUndefined(v);
    if (n !== undefined) record.set(k, n);
  }
  return record;
}

/** `rollout_infos` entry: here top-level fields overwrite usage fields, the reverse of the stats. */
function rolloutInfo(result: Keyed): Row {
  const info: Row = { rollout_id: `${result.task}:${result.rollout}`, [TASK]: result.task, [ROLLOUT]: result.rollout };
  if ('reward' in result.value) info.reward = result.value.reward;
  for (const [k, v] of Object.entries(usageOf(result))) {
    const n = numericOrUndefined(v);
    if (n !== undefined) info[k] = n;
  }
  for (const [k, v] of Object.entries(result.value)) {
    if (k === TASK || k === ROLLOUT || k === 'reward' || k === 'response') continue;
    const n = numericOrUndefined(v);
    if (n !== undefined) info[k] = n;
  }
  return info;
}

function groupStats(records: Map<string, unknown>[], columns: string[]): [string, StatValue][] {
  const cells = new Map<string, Cell[]>(columns.map((c) => [c, records.map((r) => r.get(c) as Cell)]));
  return describeGroup(columns, cells);
}

/** Groups in first-seen order, which is ascending for task indices because records are sorted by key. */
function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export function withoutIndices(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([k]) => k !== TASK && k !== ROLLOUT));
}

export function profileFromData(
  rows: readonly object[],
  results: readonly object[],
  allowPartialRollouts: boolean,
): { groupLevel: GroupLevelMetrics[]; agentLevel: AgentLevelMetrics[] } {
  const rowByKey = indexUnique(rows, 'Materialized input row', 'materialized input row');
  const resultByKey = indexUnique(results, 'Rollout result', 'result row');

  const extra = [...resultByKey.entries()].filter(([id]) => !rowByKey.has(id)).map(([, k]) => k);
  if (extra.length > 0) {
    throw new RewardProfileError(
      `Rollout results contain rows with no matching materialized input rows. Found ${extra.length} extra rollout rows. Extra rollout keys: ${keyList(extra)}`,
    );
  }
  const missing = [...rowByKey.entries()].filter(([id]) => !resultByKey.has(id)).map(([, k]) => k);
  if (missing.length > 0 && !allowPartialRollouts) {
    throw new RewardProfileError(
      `Materialized input rows and rollout results do not have matching rollout keys. Missing rollout results for ${missing.length} materialized input rows. Missing rollout keys: ${keyList(missing)}.\n\nUse ++allow_partial_rollouts=True to profile completed rollouts from a partial collection.`,
    );
  }

  const matched = [...resultByKey.values()].sort(byKey);
  if (matched.length === 0) return { groupLevel: [], agentLevel: [] };

  const expectedPerTask = new Map<number, number>();
  for (const k of rowByKey.values()) expectedPerTask.set(k.task, (expectedPerTask.get(k.task) ?? 0) + 1);
  const records = matched.map((res) => numericRecord(rowByKey.get(mapKey(res.task, res.rollout))!.value, res));

  const columns = new Set<string>();
  for (const r of records) for (const k of r.keys()) columns.add(k);
  const groupColumns = [...columns].filter((c) => c !== TASK && c !== ROLLOUT && c !== 'agent_name');

  const resultsByTask = groupBy(matched, (k) => k.task);
  const groupLevel: GroupLevelMetrics[] = [];
  for (const [task, group] of groupBy(records, (r) => r.get(TASK) as number)) {
    const taskResults = resultsByTask.get(task)!;
    const first = taskResults[0]!;
    const sample = withoutIndices(rowByKey.get(mapKey(first.task, first.rollout))!.value);
    const expected = expectedPerTask.get(task) ?? 0;
    groupLevel.push({
      [TASK]: task,
      ...Object.fromEntries(groupStats(group, groupColumns)),
      sample,
      num_rollouts: group.length,
      expected_num_rollouts: expected,
      missing_num_rollouts: expected - group.length,
      reward_profile_completion_pct: expected > 0 ? (100 * group.length) / expected : 100,
      rollout_infos: taskResults.map(rolloutInfo),
    });
  }

  const agentGroups = [...groupBy(records, (r) => r.get('agent_name'))].sort(([a], [b]) => comparePython(String(a), String(b)));
  const agentLevel: AgentLevelMetrics[] = agentGroups.map(([name, group]) => ({
    ...Object.fromEntries(groupStats(group, groupColumns)),
    agent_ref: { name },
  }));
  return { groupLevel, agentLevel };
}

export function profileCompletionSummary(rows: readonly object[], results: readonly object[]): CompletionSummary {
  const rowKeys = new Map(rows.map((r, i) => {
    const k = keyed(r, 'Materialized input row', i);
    return [mapKey(k.task, k.rollout), k] as const;
  }));
  const resultKeys = new Set(results.map((r, i) => {
    const k = keyed(r, 'Rollout result', i);
    return mapKey(k.task, k.rollout);
  }));
  const expectedPerTask = new Map<number, number>();
  const donePerTask = new Map<number, number>();
  let completed = 0;
  for (const [id, k] of rowKeys) {
    expectedPerTask.set(k.task, (expectedPerTask.get(k.task) ?? 0) + 1);
    if (resultKeys.has(id)) {
      completed++;
      donePerTask.set(k.task, (donePerTask.get(k.task) ?? 0) + 1);
    }
  }
  let complete = 0;
  let partial = 0;
  let missingTasks = 0;
  for (const [task, expected] of expectedPerTask) {
    const done = donePerTask.get(task) ?? 0;
    if (done === expected) complete++;
    else if (done > 0) partial++;
    else missingTasks++;
  }
  const expected = rowKeys.size;
  return {
    expected_rollout_rows: expected,
    completed_rollout_rows: completed,
    missing_rollout_rows: expected - completed,
    extra_rollout_rows: [...resultKeys].filter((id) => !rowKeys.has(id)).length,
    reward_profile_completion_pct: expected > 0 ? (100 * completed) / expected : 100,
    total_input_rows: expectedPerTask.size,
    complete_input_rows: complete,
    partial_input_rows: partial,
    missing_input_rows: missingTasks,
  };
}

/** Copies without the `histogram*` keys, which hold W&B objects that are never written to disk. */
export function prepareForSerialization<T extends object>(rows: readonly T[]): Partial<T>[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('histogram'))) as Partial<T>);
}
