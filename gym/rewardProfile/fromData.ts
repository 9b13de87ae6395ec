import { completionSummary } from './completion';
import { profileTables, type AgentLevelMetrics, type CompletionSummary, type GroupLevelMetrics } from './profile';
import { InputTable, isRow, ROLLOUT, RolloutTable, TASK } from './table';
import { RewardProfileError } from '../errors';

// Upstream's `profile_from_data` and `profile_completion_summary` on rows already in memory, as its
// tests and the `/aggregate_metrics` computation call them: the rows are checked, put in tables and
// profiled, and every group row is built.

type Row = Record<string, unknown>;

export function checkedKey(
  value: unknown,
  what: string,
  position: number,
): Row & { [TASK]: number; [ROLLOUT]: number } {
  if (!isRow(value)) throw new RewardProfileError(`${what} ${position} is not a JSON object`);
  for (const key of [TASK, ROLLOUT]) {
    if (!(key in value)) throw new RewardProfileError(`${what} ${position} has no '${key}'`);
    if (!Number.isInteger(value[key])) throw new RewardProfileError(`${what} ${position}: '${key}' must be an integer`);
  }
  return value as Row & { [TASK]: number; [ROLLOUT]: number };
}

const NO_NAME = Symbol('no agent_ref.name');

function tables(
  rows: readonly object[],
  results: readonly object[],
): { inputs: InputTable; done: RolloutTable; named: () => void } {
  const inputs = new InputTable();
  const unnamed: Row[] = [];
  rows.forEach((value, i) => {
    const row = checkedKey(value, 'Materialized input row', i);
    const ref = row.agent_ref;
    const named = isRow(ref) && 'name' in ref;
    if (!named) unnamed.push(row);
    inputs.add(row[TASK], row[ROLLOUT], named ? ref.name : NO_NAME);
  });
  const done = new RolloutTable();
  const doneKeys = new Set<string>();
  results.forEach((value, i) => {
    const result = checkedKey(value, 'Rollout result', i);
    done.add(result[TASK], result[ROLLOUT], result);
    doneKeys.add(`${result[TASK]},${result[ROLLOUT]}`);
  });
  // Upstream reads agent names only for rows with a result, once the keys have been matched.
  const named = () => {
    const row = unnamed.find((r) => doneKeys.has(`${String(r[TASK])},${String(r[ROLLOUT])}`));
    if (row)
      throw new RewardProfileError(
        `Materialized input row for rollout key (${String(row[TASK])}, ${String(row[ROLLOUT])}) has no 'agent_ref.name'`,
      );
  };
  return { inputs, done, named };
}

export function withoutIndices(row: Row): Row {
  return Object.fromEntries(Object.entries(row).filter(([k]) => k !== TASK && k !== ROLLOUT));
}

export function profileFromData(
  rows: readonly object[],
  results: readonly object[],
  allowPartialRollouts: boolean,
): { groupLevel: GroupLevelMetrics[]; agentLevel: AgentLevelMetrics[] } {
  const { inputs, done, named } = tables(rows, results);
  const profile = profileTables(inputs, done, allowPartialRollouts);
  named();
  const groupLevel = [...profile.groups((i) => withoutIndices(rows[i] as Row))].map((g) => g.row);
  return { groupLevel, agentLevel: profile.agents() };
}

export function profileCompletionSummary(rows: readonly object[], results: readonly object[]): CompletionSummary {
  const { inputs, done } = tables(rows, results);
  return completionSummary(inputs, done);
}
