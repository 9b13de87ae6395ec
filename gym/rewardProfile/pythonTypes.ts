import { loadsPythonJson, type PyDict, type PyValue } from '../pythonJson';
import { RawJson } from '../pythonJsonDumps';
import { lineKinds, type LineKinds } from './numberKinds';
import { MASK_SAMPLE, NumberColumn, ROLLOUT, TASK } from './table';

// `ng_reward_profile` writes Python values with orjson, so `1.0` and `1` are different bytes. Which
// one a number is follows Python's and pandas' rules from the types in the rollouts file itself:
// - mean/median/std are floats; max/min are ints only while every column of the frame is int64
//   (one float column, or one rollout missing a column, makes pandas upcast them all to float64);
// - `rollout_infos` and `sample` copy values with the type they had in the files.

type Row = Record<string, unknown>;

const FLOAT_STATS = /^(mean|median|std)\//;
const EXTREME_STATS = /^(max|min)\//;

/**
 * The kinds of the stats frame's columns, rollout by rollout: whether any column is float64 once
 * every rollout is in (a float in it, or a rollout without it), which decides every max/min's type.
 */
export class FrameKinds {
  private readonly columns = new Map<string, { float: boolean; seen: number }>();
  private rollouts = 0;
  /** Read for every max/min written, so worked out once per change. */
  private anyFloat: boolean | undefined;

  add(kinds: LineKinds): void {
    this.rollouts++;
    this.anyFloat = undefined;
    // The frame's columns: top-level numbers overwritten by usage numbers (`result | usage`).
    for (const [k, kind] of new Map([...kinds.top, ...kinds.usage])) {
      if (k.startsWith('_') || k === MASK_SAMPLE) continue;
      const column = this.columns.get(k) ?? { float: false, seen: 0 };
      column.float ||= kind === 'float';
      column.seen++;
      this.columns.set(k, column);
    }
  }

  anyFloatColumn(): boolean {
    this.anyFloat ??= [...this.columns.values()].some((c) => c.float || c.seen < this.rollouts);
    return this.anyFloat;
  }
}

/** Collects, rollout by rollout, the Python type of every number profiling reads. */
export class RolloutNumberKinds {
  // Rollouts of one run nearly all share one set of kinds: each distinct set is kept once, and a
  // rollout holds only its set's number.
  private readonly kindSets: LineKinds[] = [];
  private readonly kindSetIds = new Map<string, number>();
  private readonly kindSetOf = new NumberColumn();
  private readonly frame: FrameKinds;
  private readonly ownFrame: boolean;

  /**
   * `frame`: the kinds of the whole frame, when these rollouts are a part of it whose frame was
   * read already (a profile built task by task); by default the frame is these rollouts'.
   */
  constructor(frame?: FrameKinds) {
    this.ownFrame = frame === undefined;
    this.frame = frame ?? new FrameKinds();
  }

  /** `text` is the JSON line, as written in the rollouts file, of the rollout at `position` in the table. */
  add(position: number, text: string): void {
    const kinds = lineKinds(text);
    const signature = JSON.stringify([[...kinds.top], [...kinds.usage]]);
    let id = this.kindSetIds.get(signature);
    if (id === undefined) {
      id = this.kindSets.push(kinds) - 1;
      this.kindSetIds.set(signature, id);
    }
    this.kindSetOf.set(position, id);
    if (this.ownFrame) this.frame.add(kinds);
  }

  private statValue(key: string, value: unknown): PyValue {
    if (typeof value !== 'number') return value as PyValue;
    if (FLOAT_STATS.test(key) || (EXTREME_STATS.test(key) && this.frame.anyFloatColumn())) return value;
    return BigInt(value);
  }

  /** `rollout_infos` take top-level numbers over usage numbers (the reverse of the frame). */
  private rolloutInfo(info: Row, position: number): PyDict {
    const kinds = this.kindSets[this.kindSetOf.get(position)];
    const typed: PyDict = new Map();
    for (const [k, v] of Object.entries(info)) {
      const kind = kinds?.top.get(k) ?? kinds?.usage.get(k);
      typed.set(k, typeof v === 'number' && kind !== 'float' ? BigInt(v) : (v as PyValue));
    }
    return typed;
  }

  /**
   * A group-level row as Python values: `rollouts` are the table positions of its `rollout_infos`,
   * and `sample` is already a Python value (a materialized input line as decoded, indices removed).
   */
  groupRow(row: Row, rollouts: Uint32Array, sample: PyValue): PyDict {
    const typed: PyDict = new Map();
    for (const [k, v] of Object.entries(row)) {
      if (k === 'sample') typed.set(k, sample);
      else if (k === 'rollout_infos')
        typed.set(
          k,
          (v as Row[]).map((info, j) => this.rolloutInfo(info, rollouts[j]!)),
        );
      else if (k === 'reward_profile_completion_pct') typed.set(k, v as number);
      else typed.set(k, this.statValue(k, v));
    }
    return typed;
  }

  /** An agent-level row as Python values (its `agent_ref` is plain: a name, no numbers). */
  agentRow(row: Row): PyDict {
    return new Map(Object.entries(row).map(([k, v]) => [k, k === 'agent_ref' ? (v as PyValue) : this.statValue(k, v)]));
  }
}

/** The two keys materialization appends to a row, last, as NeMo Gym does. */
const APPENDED_KEYS = /,"_ng_task_index":\d+,"_ng_rollout_index":\d+\}$/;

/**
 * The `sample` of a line in orjson's own bytes (what a pipeline's materialization writes): the line
 * without the two keys it ends with, which is what decoding it and writing it back would give,
 * without the decoding. Undefined when the keys are not where materialization puts them.
 */
export function canonicalSample(line: string): RawJson | undefined {
  const keys = APPENDED_KEYS.exec(line);
  return keys ? new RawJson(`${line.slice(0, keys.index)}}`) : undefined;
}

/** A materialized input line as the `sample` of its group: decoded with Python's types, indices removed. */
export function sampleValue(line: string): PyDict {
  const sample = loadsPythonJson(line) as PyDict;
  sample.delete(TASK);
  sample.delete(ROLLOUT);
  return sample;
}
