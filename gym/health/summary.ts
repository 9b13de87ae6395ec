import { pyStr, type Index, type RolloutDigest, type Verdict } from './rolloutDigest';
import { CHECK_IDS, ROLLOUT_SPECS, type CheckId } from './registry';

// 0.7.0's run-level reduction of a stage's rollout digests, fed one digest at a time. What it keeps
// per rollout is one small number under its (task, rollout, stage) identity: its verdict, whether
// its policy calls were all observed, and whether any succeeded. That is what the duplicate check
// and the two task checks read once every record is in.

const VERDICTS: readonly Verdict[] = ['healthy', 'unhealthy', 'unobserved'];
const UNHEALTHY = 1;
const POLICY_OBSERVED = 4;
const SUCCEEDED = 8;

const indexKey = (value: Index) => JSON.stringify(value);

interface TaskEntry {
  taskIndex: Index;
  /** Per [rollout index, stage index]: one code per record claiming that identity. */
  records: Map<string, number[]>;
  /** Per identity, where each record's verdict row was written: offset and length, in pairs. */
  rows: Map<string, number[]>;
}

/** The records of one (task, rollout, stage) identity, for writing their verdict rows. */
export interface IdentityRows {
  taskIndex: Index;
  rolloutIndex: Index;
  stageIndex: Index;
  /** Offset and length of each record's row, in pairs, in the order the records came. */
  rows: readonly number[];
  /** How many records claim the identity when the duplicate check counts them; 0 otherwise. */
  duplicates: number;
}

/** Where a check found something: the rollout, and the finding's locator and detail. */
export interface HealthExample {
  rolloutId: string;
  locator?: Record<string, string | number>;
  detail: Record<string, unknown>;
}

const EXAMPLES_PER_CHECK = 3;

export type Coverage = Record<CheckId, { evaluated: number; unobserved: number; ignored: number }>;

export interface QualitySummary {
  ignoredChecks: CheckId[];
  records: number;
  captures: number;
  coverage: Coverage;
  verdicts: Record<Verdict, number>;
  issues: Record<CheckId, number>;
  modelCallErrors: { total: number; byStatus: Map<string, number>; rolloutsAffected: number; endedOnError: number };
  duplicatedCalls: { replayed: number; rollouts: number };
  tokens: { prompt: number; completion: number; capturePrompt: number; captureCompletion: number };
  /** The first few findings of each check, for a reader to look up (not in 0.7.0's summary). */
  examples: Partial<Record<CheckId, HealthExample[]>>;
  /** Per task, in 0.7.0's order: its repeats' verdicts and the task checks it failed. */
  tasks: Array<{ key: string; repeats: number; verdicts: Record<Verdict, number>; flags: CheckId[] }>;
}

const zeroCoverage = () =>
  Object.fromEntries(CHECK_IDS.map((id) => [id, { evaluated: 0, unobserved: 0, ignored: 0 }])) as Coverage;

export class HealthReducer {
  private readonly tasks = new Map<string, TaskEntry>();
  private readonly s: QualitySummary;

  constructor(private readonly ignored: ReadonlySet<CheckId>) {
    this.s = {
      ignoredChecks: [...ignored].sort(),
      records: 0,
      captures: 0,
      coverage: zeroCoverage(),
      verdicts: { healthy: 0, unhealthy: 0, unobserved: 0 },
      issues: Object.fromEntries(CHECK_IDS.map((id) => [id, 0])) as Record<CheckId, number>,
      modelCallErrors: { total: 0, byStatus: new Map(), rolloutsAffected: 0, endedOnError: 0 },
      duplicatedCalls: { replayed: 0, rollouts: 0 },
      tokens: { prompt: 0, completion: 0, capturePrompt: 0, captureCompletion: 0 },
      examples: {},
      tasks: [],
    };
  }

  /** `row`: where the record's verdict row was written, when the rows are. */
  add(d: RolloutDigest, row?: { offset: number; length: number }): void {
    const s = this.s;
    s.records++;
    if (d.captureObserved) s.captures++;
    for (const spec of ROLLOUT_SPECS) {
      const cell = s.coverage[spec.id as CheckId];
      if (this.ignored.has(spec.id as CheckId)) cell.ignored++;
      else if (d.unobserved.includes(spec.id)) cell.unobserved++;
      else cell.evaluated++;
    }
    for (const f of d.findings) {
      s.issues[f.check as CheckId]++;
      const examples = (s.examples[f.check as CheckId] ??= []);
      if (examples.length < EXAMPLES_PER_CHECK)
        examples.push({ rolloutId: d.rolloutId, locator: f.locator, detail: f.detail });
    }
    const e = s.modelCallErrors;
    e.total += d.modelCallErrors;
    for (const [status, n] of d.errorsByStatus) e.byStatus.set(status, (e.byStatus.get(status) ?? 0) + n);
    if (d.modelCallErrors > 0) e.rolloutsAffected++;
    if (d.endedOnError) e.endedOnError++;
    s.duplicatedCalls.replayed += d.duplicatedCalls;
    if (d.duplicatedCalls > 0) s.duplicatedCalls.rollouts++;
    s.tokens.prompt += d.transcriptPrompt;
    s.tokens.completion += d.transcriptCompletion;
    s.tokens.capturePrompt += d.capturePrompt;
    s.tokens.captureCompletion += d.captureCompletion;
    const code =
      VERDICTS.indexOf(d.verdict) |
      (d.policyCallsObserved ? POLICY_OBSERVED : 0) |
      (d.successfulModelCalls > 0 ? SUCCEEDED : 0);
    const task = this.tasks.get(indexKey(d.taskIndex)) ?? {
      taskIndex: d.taskIndex,
      records: new Map<string, number[]>(),
      rows: new Map<string, number[]>(),
    };
    this.tasks.set(indexKey(d.taskIndex), task);
    const identity = JSON.stringify([d.rolloutIndex, d.stageIndex]);
    task.records.set(identity, [...(task.records.get(identity) ?? []), code]);
    if (row) task.rows.set(identity, [...(task.rows.get(identity) ?? []), row.offset, row.length]);
  }

  /** The task indexes, in the order their first records came. */
  taskIndexes(): Index[] {
    return [...this.tasks.values()].map((task) => task.taskIndex);
  }

  /** A task's identities and where their rows are; after `finish`. */
  identitiesOf(taskIndex: Index): IdentityRows[] {
    const task = this.tasks.get(indexKey(taskIndex))!;
    const markDuplicates = !this.ignored.has('rollout_duplicate_identity');
    return [...task.rows].map(([identity, rows]) => {
      const [rolloutIndex, stageIndex] = JSON.parse(identity) as [Index, Index];
      const duplicates = markDuplicates && rows.length > 2 ? rows.length / 2 : 0;
      return { taskIndex, rolloutIndex, stageIndex, rows, duplicates };
    });
  }

  /** The summary, once every record has been added. */
  finish(): QualitySummary {
    const s = this.s;
    const markDuplicates = !this.ignored.has('rollout_duplicate_identity');
    for (const task of this.tasks.values()) {
      for (const codes of task.records.values()) {
        if (markDuplicates && codes.length > 1) {
          s.issues.rollout_duplicate_identity += codes.length;
          codes.forEach((code, i) => (codes[i] = (code & ~3) | UNHEALTHY));
        }
        for (const code of codes) s.verdicts[VERDICTS[code & 3]!]++;
      }
    }
    s.tasks = this.taskRows();
    return s;
  }

  private taskRows(): QualitySummary['tasks'] {
    const ordered = [...this.tasks.values()].sort((a, b) => compareTaskIndexes(a.taskIndex, b.taskIndex));
    return ordered.map((task) => {
      const repeats = uniqueRepeats(task.records);
      const verdicts = { healthy: 0, unhealthy: 0, unobserved: 0 };
      for (const code of repeats) verdicts[VERDICTS[code & 3]!]++;
      return { key: pyStr(task.taskIndex), repeats: repeats.length, verdicts, flags: this.taskFlags(repeats) };
    });
  }

  private taskFlags(repeats: readonly number[]): CheckId[] {
    const flags: CheckId[] = [];
    const cover = this.s.coverage;
    if (this.ignored.has('task_consistently_unhealthy')) cover.task_consistently_unhealthy.ignored++;
    else {
      const computable = repeats.filter((code) => VERDICTS[code & 3] !== 'unobserved');
      if (computable.length >= 2) {
        cover.task_consistently_unhealthy.evaluated++;
        if (computable.every((code) => (code & 3) === UNHEALTHY)) flags.push('task_consistently_unhealthy');
      } else cover.task_consistently_unhealthy.unobserved++;
    }
    if (this.ignored.has('task_no_successful_model_calls')) cover.task_no_successful_model_calls.ignored++;
    else if (repeats.length > 0 && repeats.every((code) => code & POLICY_OBSERVED)) {
      cover.task_no_successful_model_calls.evaluated++;
      if (!repeats.some((code) => code & SUCCEEDED)) flags.push('task_no_successful_model_calls');
    } else cover.task_no_successful_model_calls.unobserved++;
    for (const flag of flags) this.s.issues[flag]++;
    return flags;
  }
}

/**
 * A task's repeats: the records of one rollout index (whatever their stage) are one repeat, whose
 * verdict is theirs when they agree and unobserved when they do not.
 */
function uniqueRepeats(records: Map<string, number[]>): number[] {
  const byRollout = new Map<string, number[]>();
  for (const [identity, codes] of records) {
    const rollout = JSON.stringify((JSON.parse(identity) as [Index, Index])[0]);
    byRollout.set(rollout, [...(byRollout.get(rollout) ?? []), ...codes]);
  }
  return [...byRollout.values()].map((codes) => {
    const verdicts = new Set(codes.map((code) => code & 3));
    const verdict = verdicts.size === 1 ? codes[0]! & 3 : VERDICTS.indexOf('unobserved');
    const policy = codes.every((code) => code & POLICY_OBSERVED) ? POLICY_OBSERVED : 0;
    return verdict | policy | (codes.some((code) => code & SUCCEEDED) ? SUCCEEDED : 0);
  });
}

/** 0.7.0's task order: non-string indexes first, each group by its text. */
function compareTaskIndexes(a: Index, b: Index): number {
  const [ka, kb] = [
    [typeof a === 'string' ? 1 : 0, pyStr(a)] as const,
    [typeof b === 'string' ? 1 : 0, pyStr(b)] as const,
  ];
  if (ka[0] !== kb[0]) return ka[0] - kb[0];
  return ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0;
}
