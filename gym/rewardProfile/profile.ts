import { byAgent, CoverageCounter, FanOutDetector, type CoverageEntries } from './coverage';
import type { AgentRollouts } from './repeats';
import { describeGroup } from './stats';
import { InputTable, RolloutTable, TASK } from './table';
import { RewardProfileError } from '../errors';

// NeMo Gym's RewardProfiler (`profile_from_data`, `profile_completion_summary`) over the columns of
// the materialized inputs and the rollout results, aligned by (`_ng_task_index`, `_ng_rollout_index`).
// Group rows are built one task at a time, so a caller can write them without holding them all.
// Error messages are upstream's, word for word, because users search for them.

export type { CompletionSummary } from './completion';

type Row = Record<string, unknown>;

export type GroupLevelMetrics = Row;
export type AgentLevelMetrics = Row;

/** One task's group row and the result positions its `rollout_infos` come from, in order. */
export interface ProfiledGroup {
  row: GroupLevelMetrics;
  rollouts: Uint32Array;
}

const MAX_KEYS_SHOWN = 10;

/** Python's default string order (code points), which differs from UTF-16 order above the BMP. */
export function comparePython(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const d = ca[i]!.codePointAt(0)! - cb[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

function keyList(table: RolloutTable | InputTable, positions: number[]): string {
  return keysText(positions.slice(0, MAX_KEYS_SHOWN).map((i) => table.keyText(i)));
}

/** Upstream prints at most this many keys, as a Python list of tuples, e.g. `[(0, 1)]`. */
export function keysText(keys: readonly string[]): string {
  return `[${keys.slice(0, MAX_KEYS_SHOWN).join(', ')}]`;
}

export function extraRolloutsError(count: number, keys: string): RewardProfileError {
  return new RewardProfileError(
    `Rollout results contain rows with no matching materialized input rows. Found ${count} extra rollout rows. Extra rollout keys: ${keys}`,
  );
}

export function missingRolloutsError(count: number, keys: string): RewardProfileError {
  return new RewardProfileError(
    `Materialized input rows and rollout results do not have matching rollout keys. Missing rollout results for ${count} materialized input rows. Missing rollout keys: ${keys}.\n\nUse ++allow_partial_rollouts=True to profile completed rollouts from a partial collection.`,
  );
}

export function noResponseError(position: number): RewardProfileError {
  return new RewardProfileError(`Rollout result ${position} has no 'response' object`);
}

/** The duplicate upstream meets first: the earliest repeat in table order, or the lowest key. */
function throwOnDuplicate(table: RolloutTable | InputTable, label: string, inKeyOrder: boolean): void {
  const order = table.keyOrder();
  let found: number | undefined;
  for (let j = 1; j < order.length; j++) {
    const [a, b] = [order[j - 1]!, order[j]!];
    if (table.task.get(a) !== table.task.get(b) || table.rollout.get(a) !== table.rollout.get(b)) continue;
    if (inKeyOrder) {
      found = b;
      break;
    }
    if (found === undefined || b < found) found = b;
  }
  if (found !== undefined) throw new RewardProfileError(`Duplicate ${label} for rollout key ${table.keyText(found)}`);
}

/** Both key orders walked side by side: matched results (with their row), extra results, missing rows. */
function join(inputs: InputTable, results: RolloutTable) {
  const rows = inputs.keyOrder();
  const done = results.keyOrder();
  const rowOf = new Uint32Array(done.length);
  const extra: number[] = [];
  const missing: number[] = [];
  let i = 0;
  let j = 0;
  while (i < rows.length || j < done.length) {
    const r = rows[i];
    const d = done[j];
    const c =
      r === undefined
        ? 1
        : d === undefined
          ? -1
          : inputs.task.get(r) - results.task.get(d) || inputs.rollout.get(r) - results.rollout.get(d);
    if (c < 0) missing.push(rows[i++]!);
    else if (c > 0) extra.push(done[j++]!);
    else rowOf[j++] = rows[i++]!;
  }
  return { rowOf, extra, missing };
}

/** The input positions of a task's rows in key order, by binary search over the inputs' key order. */
function rowsOfTask(inputs: InputTable, task: number): number[] {
  const order = inputs.keyOrder();
  const bound = (strict: boolean) => {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const t = inputs.task.get(order[mid]!);
      if (t < task || (strict && t === task)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return Array.from(order.subarray(bound(false), bound(true)));
}

/** A task's group row (its `sample` as given): `members` are its results' table positions in key order. */
export function groupRow(
  results: RolloutTable,
  members: Uint32Array,
  columns: readonly string[],
  expected: number,
  sample: unknown,
  agent?: string,
): Row {
  const cellsOver = (column: string) => {
    const values = results.stats.get(column);
    return Float64Array.from(members, (i) => (values ? values.get(i) : NaN));
  };
  const row: Row = { [TASK]: results.task.get(members[0]!), ...Object.fromEntries(describeGroup(columns, cellsOver)) };
  if (agent !== undefined) row.agent_ref = { name: agent };
  row.sample = sample;
  row.num_rollouts = members.length;
  row.expected_num_rollouts = expected;
  row.missing_num_rollouts = expected - members.length;
  row.reward_profile_completion_pct = expected > 0 ? (100 * members.length) / expected : 100;
  row.rollout_infos = Array.from(members, (i) => results.rolloutInfo(i));
  return row;
}

/** The agent rows, by agent name in Python's order, from each agent's cells of every column. */
export function agentRows(
  agents: Array<{ name: unknown; cellsOf: (column: string) => Float64Array }>,
  columns: readonly string[],
): AgentLevelMetrics[] {
  return agents
    .sort((a, b) => comparePython(String(a.name), String(b.name)))
    .map(({ name, cellsOf }) => ({ ...Object.fromEntries(describeGroup(columns, cellsOf)), agent_ref: { name } }));
}

/** The frame's columns in first-seen order over the results in key order. */
function frameColumns(results: RolloutTable, measured: (i: number) => boolean): string[] {
  const columnSet = new Set<string>();
  const shapesSeen = new Set<object>();
  for (const i of results.keyOrder()) {
    if (!measured(i)) continue;
    const shape = results.shape(i);
    if (shapesSeen.has(shape)) continue;
    shapesSeen.add(shape);
    for (const k of shape.stat) columnSet.add(k);
  }
  return [...columnSet];
}

export interface Profile {
  /** Group rows in task (then agent) order, built on demand; `sampleOf` gets the input position of the group's first completed rollout. */
  groups(sampleOf: (inputPosition: number) => unknown): Generator<ProfiledGroup>;
  agents(): AgentLevelMetrics[];
  /** Each agent's measured rollouts, for the repeat-level metrics. */
  agentRollouts(): AgentRollouts[];
  coverage(): Map<string, CoverageEntries>;
  /** The stats frame's columns. */
  columns: readonly string[];
}

/**
 * `gym070`: NeMo Gym 0.7.0's rules, masked rollouts left out (with their rows) and a task run by
 * several agents profiled per agent; without, 0.4.0's.
 */
export function profileTables(
  inputs: InputTable,
  results: RolloutTable,
  allowPartialRollouts: boolean,
  gym070 = true,
): Profile {
  throwOnDuplicate(inputs, 'materialized input row', false);
  throwOnDuplicate(results, 'result row', results.firstDuplicateInKeyOrder);
  const { rowOf, extra, missing } = join(inputs, results);
  if (extra.length > 0) throw extraRolloutsError(extra.length, keyList(results, extra));
  if (missing.length > 0 && !allowPartialRollouts) throw missingRolloutsError(missing.length, keyList(inputs, missing));
  const order = results.keyOrder();
  // 0.7.0 profiles such a rollout as one without usage.
  if (results.withoutResponse.length > 0 && !gym070) {
    throw noResponseError(results.withoutResponse.reduce((a, b) => (results.compare(a, b) <= 0 ? a : b)));
  }
  const measured = (i: number) => !(gym070 && results.masked.has(i));
  const maskedRows = new Set<number>();
  order.forEach((i, j) => !measured(i) && maskedRows.add(rowOf[j]!));
  const agentName = (row: number) => String(inputs.agentNames[inputs.agent.get(row)]);
  const fanOut = new FanOutDetector();
  if (gym070) for (const r of inputs.keyOrder()) if (!maskedRows.has(r)) fanOut.add(inputs.task.get(r), agentName(r));
  const columns = frameColumns(results, measured);
  /** Measured results as key-order indices. */
  const kept: number[] = [];
  order.forEach((i, j) => measured(i) && kept.push(j));

  function* groups(sampleOf: (inputPosition: number) => unknown): Generator<ProfiledGroup> {
    for (let g = 0; g < kept.length;) {
      const task = results.task.get(order[kept[g]!]!);
      let end = g;
      while (end < kept.length && results.task.get(order[kept[end]!]!) === task) end++;
      const taskMembers = kept.slice(g, end);
      g = end;
      const rows = rowsOfTask(inputs, task).filter((r) => !maskedRows.has(r));
      const split: [string | undefined, number[]][] = fanOut.fanOut
        ? byAgent(taskMembers, (j) => agentName(rowOf[j]!))
        : [[undefined, taskMembers]];
      for (const [agent, js] of split) {
        const expected = agent === undefined ? rows.length : rows.filter((r) => agentName(r) === agent).length;
        const members = Uint32Array.from(js, (j) => order[j]!);
        const row = groupRow(results, members, columns, expected, sampleOf(rowOf[js[0]!]!), agent);
        yield { row, rollouts: members };
      }
    }
  }

  /** Each agent's measured results as key-order indices, agents in order of their first result. */
  function byAgentName(): Map<string, number[]> {
    const grouped = new Map<string, number[]>();
    for (const j of kept) {
      const name = agentName(rowOf[j]!);
      let list = grouped.get(name);
      if (!list) grouped.set(name, (list = []));
      list.push(j);
    }
    return grouped;
  }

  const cellOf = (column: string, j: number) => results.stats.get(column)?.get(order[j]!) ?? NaN;

  function agents(): AgentLevelMetrics[] {
    return agentRows(
      [...byAgentName().values()].map((js) => ({
        name: inputs.agentNames[inputs.agent.get(rowOf[js[0]!]!)],
        cellsOf: (column: string) => Float64Array.from(js, (j) => cellOf(column, j)),
      })),
      columns,
    );
  }

  function agentRollouts(): AgentRollouts[] {
    return [...byAgentName()].map(([name, js]) => ({
      name,
      count: js.length,
      task: (i: number) => results.task.get(order[js[i]!]!),
      rollout: (i: number) => results.rollout.get(order[js[i]!]!),
      cellsOf: (column: string) => Float64Array.from(js, (j) => cellOf(column, j)),
    }));
  }

  function coverage(): Map<string, CoverageEntries> {
    const counter = new CoverageCounter();
    order.forEach((i, j) => counter.add(agentName(rowOf[j]!), results.task.get(i), !measured(i)));
    return counter.entries();
  }

  return { groups, agents, agentRollouts, coverage, columns };
}
