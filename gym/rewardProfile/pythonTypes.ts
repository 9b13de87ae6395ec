import { isPyDict, loadsPythonJson, type PyDict, type PyValue } from '../pythonJson';

// `ng_reward_profile` writes Python values with orjson, so `1.0` and `1` are different bytes. Which
// one a number is follows Python's and pandas' rules from the types in the rollouts file itself:
// - mean/median/std are floats; max/min are ints only while every column of the frame is int64
//   (one float column, or one rollout missing a column, makes pandas upcast them all to float64);
// - `rollout_infos` and `sample` copy values with the type they had in the files.

type Row = Record<string, unknown>;
type Kind = 'int' | 'float';

const TASK = '_ng_task_index';
const ROLLOUT = '_ng_rollout_index';
const FLOAT_STATS = /^(mean|median|std)\//;
const EXTREME_STATS = /^(max|min)\//;

function numericKinds(dict: PyValue | undefined): Map<string, Kind> {
  const kinds = new Map<string, Kind>();
  if (!isPyDict(dict)) return kinds;
  for (const [k, v] of dict) {
    if (typeof v === 'number') kinds.set(k, 'float');
    else if (typeof v === 'bigint' || typeof v === 'boolean') kinds.set(k, 'int');
  }
  return kinds;
}

interface RolloutKinds {
  top: Map<string, Kind>;
  usage: Map<string, Kind>;
}

/** Collects, rollout by rollout, the Python type of every number profiling reads. */
export class RolloutNumberKinds {
  // Rollouts of one run nearly all share one set of kinds: each distinct set is kept once, and a
  // rollout holds only its set's number. Keeping the maps per rollout would also keep every rollout
  // line alive, since the scanner's keys are slices of it.
  private readonly kindSets: RolloutKinds[] = [];
  private readonly kindSetIds = new Map<string, number>();
  private readonly byTask = new Map<number, number[]>();
  private readonly columns = new Map<string, { float: boolean; seen: number }>();
  private rollouts = 0;

  /** `text` is the rollout's JSON line as written in the rollouts file. */
  add(task: number, rollout: number, text: string): void {
    const value = loadsPythonJson(text);
    const top = numericKinds(value);
    const response = isPyDict(value) ? value.get('response') : undefined;
    const usage = numericKinds(isPyDict(response) ? response.get('usage') : undefined);
    const signature = JSON.stringify([[...top], [...usage]]);
    let id = this.kindSetIds.get(signature);
    if (id === undefined) {
      id = this.kindSets.push({ top, usage }) - 1;
      this.kindSetIds.set(signature, id);
    }
    let ids = this.byTask.get(task);
    if (!ids) this.byTask.set(task, (ids = []));
    ids[rollout] = id;
    this.rollouts++;
    // The frame's columns: top-level numbers overwritten by usage numbers (`result | usage`).
    for (const [k, kind] of new Map([...top, ...usage])) {
      if (k === TASK || k === ROLLOUT) continue;
      const column = this.columns.get(k) ?? { float: false, seen: 0 };
      column.float ||= kind === 'float';
      column.seen++;
      this.columns.set(k, column);
    }
  }

  /** Whether any column of the frame is float64 (a float in it, or a rollout without it). */
  private anyFloatColumn(): boolean {
    return [...this.columns.values()].some((c) => c.float || c.seen < this.rollouts);
  }

  private statValue(key: string, value: unknown): PyValue {
    if (typeof value !== 'number') return value as PyValue;
    if (FLOAT_STATS.test(key) || (EXTREME_STATS.test(key) && this.anyFloatColumn())) return value;
    return BigInt(value);
  }

  /** `rollout_infos` take top-level numbers over usage numbers (the reverse of the frame). */
  private rolloutInfo(info: Row): PyDict {
    const id = this.byTask.get(info[TASK] as number)?.[info[ROLLOUT] as number];
    const kinds = id === undefined ? undefined : this.kindSets[id];
    const typed: PyDict = new Map();
    for (const [k, v] of Object.entries(info)) {
      const kind = kinds?.top.get(k) ?? kinds?.usage.get(k);
      typed.set(k, typeof v === 'number' && kind !== 'float' ? BigInt(v) : (v as PyValue));
    }
    return typed;
  }

  /** A group-level row as Python values; `sampleLine` is the sample's materialized input line. */
  groupRow(row: Row, sampleLine: string): PyDict {
    const typed: PyDict = new Map();
    for (const [k, v] of Object.entries(row)) {
      if (k === 'sample') {
        const sample = loadsPythonJson(sampleLine) as PyDict;
        sample.delete(TASK);
        sample.delete(ROLLOUT);
        typed.set(k, sample);
      } else if (k === 'rollout_infos') {
        typed.set(k, (v as Row[]).map((info) => this.rolloutInfo(info)));
      } else if (k === 'reward_profile_completion_pct') {
        typed.set(k, v as number);
      } else {
        typed.set(k, this.statValue(k, v));
      }
    }
    return typed;
  }

  /** An agent-level row as Python values (its `agent_ref` is plain: a name, no numbers). */
  agentRow(row: Row): PyDict {
    return new Map(Object.entries(row).map(([k, v]) => [k, k === 'agent_ref' ? (v as PyValue) : this.statValue(k, v)]));
  }
}
