import type { InputTable, RolloutTable } from './table';

// The completion summary `ng_reward_profile` prints: how many of the expected rollouts and input
// rows (tasks, or (task, agent) under NeMo Gym 0.7.0's fan-out) have results.

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

/**
 * Counts for the completion summary, fed input rows in key order (each once, with its agent), each
 * with whether it has a result, and the extra results. Each (task, agent) is counted as complete,
 * partial or missing: NeMo Gym 0.7.0 counts fan-out copies of a task apart, and without fan-out a
 * task has one agent.
 */
export class CompletionCounter {
  private expected = 0;
  private completed = 0;
  private extra = 0;
  private readonly tasks = { total: 0, complete: 0, partial: 0, missing: 0 };
  private task: number | undefined;
  private readonly groups = new Map<string, { rows: number; done: number }>();

  row(task: number, agent: string, done: boolean): void {
    if (task !== this.task) this.closeTask();
    this.task = task;
    this.expected++;
    let group = this.groups.get(agent);
    if (!group) this.groups.set(agent, (group = { rows: 0, done: 0 }));
    group.rows++;
    if (done) {
      this.completed++;
      group.done++;
    }
  }

  extraResult(): void {
    this.extra++;
  }

  private closeTask(): void {
    for (const { rows, done } of this.groups.values()) {
      this.tasks.total++;
      if (done === rows) this.tasks.complete++;
      else if (done > 0) this.tasks.partial++;
      else this.tasks.missing++;
    }
    this.groups.clear();
  }

  summary(): CompletionSummary {
    this.closeTask();
    const { expected, completed, tasks } = this;
    return {
      expected_rollout_rows: expected,
      completed_rollout_rows: completed,
      missing_rollout_rows: expected - completed,
      extra_rollout_rows: this.extra,
      reward_profile_completion_pct: expected > 0 ? (100 * completed) / expected : 100,
      total_input_rows: tasks.total,
      complete_input_rows: tasks.complete,
      partial_input_rows: tasks.partial,
      missing_input_rows: tasks.missing,
    };
  }
}

/** Distinct keys only, as upstream counts them from dicts and sets. */
export function completionSummary(inputs: InputTable, results: RolloutTable): CompletionSummary {
  const rows = inputs.keyOrder();
  const done = results.keyOrder();
  const same = (t: RolloutTable | InputTable, a: number | undefined, b: number) =>
    a !== undefined && t.task.get(a) === t.task.get(b) && t.rollout.get(a) === t.rollout.get(b);
  const counter = new CompletionCounter();
  let j = 0;
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!;
    if (same(inputs, rows[k - 1], r)) continue;
    const c = () =>
      results.task.get(done[j]!) - inputs.task.get(r) || results.rollout.get(done[j]!) - inputs.rollout.get(r);
    for (; j < done.length && c() < 0; j++) if (!same(results, done[j - 1], done[j]!)) counter.extraResult();
    const matched = j < done.length && c() === 0;
    counter.row(inputs.task.get(r), String(inputs.agentNames[inputs.agent.get(r)]), matched);
    if (matched) for (j++; j < done.length && same(results, done[j - 1], done[j]!); j++);
  }
  for (; j < done.length; j++) if (!same(results, done[j - 1], done[j]!)) counter.extraResult();
  return counter.summary();
}
