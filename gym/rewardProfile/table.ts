// The rollouts and materialized inputs a reward profile reads, as columns: one Float64Array per
// numeric field rather than an object per rollout, so a million rollouts cost tens of megabytes
// instead of gigabytes. Key orders and the few values that do not fit a column are kept once per
// distinct shape of rollout, which nearly every rollout of a run shares.

import { NumberColumn } from './numberColumn';

// The tables' importers (the aggregate metrics) name their column from here too.
export { NumberColumn } from './numberColumn';

type Row = Record<string, unknown>;

export const TASK = '_ng_task_index';
export const ROLLOUT = '_ng_rollout_index';
const AGENT_NAME = 'agent_name';

export function isRow(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numericOrUndefined(v: unknown): number | undefined {
  if (typeof v === 'boolean') return v ? 1 : 0;
  return typeof v === 'number' ? v : undefined;
}

/** A result's `response.usage` when it is an object, whose numbers profiling takes too. */
function usageOf(result: Row): Row {
  const response = result.response;
  return isRow(response) && isRow(response.usage) ? response.usage : {};
}

/**
 * The stats frame's cells of one result: its fields merged with its usage fields (`result | usage`,
 * usage wins), numbers and bools (as 0/1) only, the keys and the agent name left out.
 */
export function forEachStat(result: Row, visit: (key: string, value: number) => void): void {
  const usage = usageOf(result);
  const cell = (k: string, v: unknown) => {
    const n = numericOrUndefined(v);
    if (n !== undefined && measuredField(k) && k !== AGENT_NAME) visit(k, n);
  };
  if (hasIntegerLikeKey(usage)) {
    // A merged object lists integer-like keys first, whichever side they came from.
    for (const [k, v] of Object.entries({ ...result, ...usage })) cell(k, v);
    return;
  }
  // The merge without building it: the result's keys in order (usage's value where it has one),
  // then usage's own.
  for (const k in result) cell(k, Object.hasOwn(usage, k) ? usage[k] : result[k]);
  for (const k in usage) if (!Object.hasOwn(result, k)) cell(k, usage[k]);
}

/**
 * Whether a result field is profiled: not a private `_` key (the indices, NeMo Gym 0.7.0's stamps)
 * and not `mask_sample`, a flag 0.7.0 strips rather than average into `mean/mask_sample`.
 */
function measuredField(key: string): boolean {
  return !key.startsWith('_') && key !== MASK_SAMPLE;
}

export const MASK_SAMPLE = 'mask_sample';

/** Python truthiness of a parsed JSON value (empty containers and strings are false); a PyDict counts its entries. */
export function pythonTruthy(value: unknown): boolean {
  // A PyDict holds ints as bigints: its 0 is 0n.
  if (value === undefined || value === null || value === false || value === 0 || value === 0n || value === '')
    return false;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  if (isRow(value)) return Object.keys(value).length > 0;
  return true;
}

function hasIntegerLikeKey(row: Row): boolean {
  for (const k in row) {
    const c = k.charCodeAt(0);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

/** The key order one kind of rollout has in the stats frame and in its `rollout_infos` entry. */
interface Shape {
  stat: string[];
  info: string[];
}

function positions(length: number): Uint32Array {
  return Uint32Array.from({ length }, (_, i) => i);
}

/**
 * 0, 1, 2, ...: the key order of every table whose rows came in order, one array shared by them all
 * (a profile and the aggregate metrics hold several tables of the same rollouts at once). Nothing
 * writes to a key order, so sharing is safe.
 */
let identityPositions: Uint32Array = new Uint32Array(0);
function identity(length: number): Uint32Array {
  if (identityPositions.length < length) identityPositions = positions(Math.max(length, 2 * identityPositions.length));
  return identityPositions.subarray(0, length);
}

/** Keys of rows in a table, and the order positions take when sorted by key (stable). */
export abstract class KeyedTable {
  readonly task = new NumberColumn();
  readonly rollout = new NumberColumn();
  length = 0;
  private sorted: Uint32Array | undefined;
  /** Whether rows came in key order, as merged rollouts and materialized inputs do: then no sort is needed. */
  private inKeyOrder = true;

  protected addKey(task: number, rollout: number): number {
    const last = this.length - 1;
    if (last >= 0 && (task < this.task.get(last) || (task === this.task.get(last) && rollout < this.rollout.get(last))))
      this.inKeyOrder = false;
    this.task.set(this.length, task);
    this.rollout.set(this.length, rollout);
    this.sorted = undefined;
    return this.length++;
  }

  compare(a: number, b: number): number {
    return this.task.get(a) - this.task.get(b) || this.rollout.get(a) - this.rollout.get(b) || a - b;
  }

  keyOrder(): Uint32Array {
    // A comparator sort copies the positions into the JS heap twice over; rows in order skip it.
    this.sorted ??= this.inKeyOrder ? identity(this.length) : positions(this.length).sort((a, b) => this.compare(a, b));
    return this.sorted;
  }

  /** The position of a task's lowest rollout, by binary search over the key order. */
  firstOfTask(task: number): number | undefined {
    const order = this.keyOrder();
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.task.get(order[mid]!) < task) lo = mid + 1;
      else hi = mid;
    }
    const first = order[lo];
    return first !== undefined && this.task.get(first) === task ? first : undefined;
  }

  /** The position of a key, by binary search over the key order (the first, if it is there twice). */
  find(task: number, rollout: number): number | undefined {
    const order = this.keyOrder();
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const i = order[mid]!;
      if ((this.task.get(i) - task || this.rollout.get(i) - rollout) < 0) lo = mid + 1;
      else hi = mid;
    }
    const found = order[lo];
    return found !== undefined && this.task.get(found) === task && this.rollout.get(found) === rollout
      ? found
      : undefined;
  }

  /** Python's tuple repr of a position's key, as upstream's messages print it. */
  keyText(i: number): string {
    return `(${this.task.get(i)}, ${this.rollout.get(i)})`;
  }
}

/** The materialized inputs' keys and agent names. */
export class InputTable extends KeyedTable {
  readonly agent = new NumberColumn();
  readonly agentNames: unknown[] = [];
  private readonly agentIds = new Map<unknown, number>();

  add(task: number, rollout: number, agentName: unknown): number {
    let id = this.agentIds.get(agentName);
    if (id === undefined) {
      id = this.agentNames.push(agentName) - 1;
      this.agentIds.set(agentName, id);
    }
    const i = this.addKey(task, rollout);
    this.agent.set(i, id);
    return i;
  }
}

/**
 * The rollout results' numbers. A stats column takes result fields merged with usage fields (usage
 * wins, bool → 0/1); a `rollout_infos` entry takes them the other way round and keeps `reward` as
 * it is, so the few rollouts where the two disagree keep their entry aside.
 */
export class RolloutTable extends KeyedTable {
  readonly stats = new Map<string, NumberColumn>();
  readonly shapes: Shape[] = [];
  private readonly shapeIds = new Map<string, number>();
  private readonly shapeOf = new NumberColumn();
  private readonly infoAside = new Map<number, Row>();
  /** Positions whose `response` is not an object, reported only once the keys have been checked. */
  readonly withoutResponse: number[] = [];
  /** Positions whose `mask_sample` is true: NeMo Gym 0.7.0 leaves them out of every statistic. */
  readonly masked = new Set<number>();

  /**
   * `firstDuplicateInKeyOrder`: upstream's command sorts the results before profiling, so the
   * duplicate it reports is the lowest key rather than the first in the file.
   */
  constructor(readonly firstDuplicateInKeyOrder = false) {
    super();
  }

  add(task: number, rollout: number, result: Row): number {
    const i = this.addKey(task, rollout);
    if (!isRow(result.response)) this.withoutResponse.push(i);
    if (pythonTruthy(result[MASK_SAMPLE])) this.masked.add(i);
    const usage = usageOf(result);

    const stat: string[] = [];
    forEachStat(result, (k, n) => {
      stat.push(k);
      let column = this.stats.get(k);
      if (!column) this.stats.set(k, (column = new NumberColumn()));
      column.set(i, n);
    });

    const info: Row = {};
    if ('reward' in result) info.reward = result.reward;
    for (const [k, v] of Object.entries(usage)) {
      const n = numericOrUndefined(v);
      if (n !== undefined) info[k] = n;
    }
    for (const [k, v] of Object.entries(result)) {
      if (!measuredField(k) || k === 'reward' || k === 'response') continue;
      const n = numericOrUndefined(v);
      if (n !== undefined) info[k] = n;
    }
    const infoKeys = Object.keys(info);
    if (infoKeys.some((k) => info[k] !== this.stats.get(k)?.get(i))) this.infoAside.set(i, info);

    const signature = `${stat.join('\0')}\u0001${infoKeys.join('\0')}`;
    let id = this.shapeIds.get(signature);
    if (id === undefined) {
      id = this.shapes.push({ stat, info: infoKeys }) - 1;
      this.shapeIds.set(signature, id);
    }
    this.shapeOf.set(i, id);
    return i;
  }

  shape(i: number): Shape {
    return this.shapes[this.shapeOf.get(i)]!;
  }

  /** The `rollout_infos` entry of one rollout. */
  rolloutInfo(i: number): Row {
    const task = this.task.get(i);
    const rollout = this.rollout.get(i);
    const info: Row = { rollout_id: `${task}:${rollout}`, [TASK]: task, [ROLLOUT]: rollout };
    const aside = this.infoAside.get(i);
    for (const k of this.shape(i).info) info[k] = aside ? aside[k] : this.stats.get(k)!.get(i);
    return info;
  }
}
