import {
  agentRows,
  groupRow,
  keysText,
  extraRolloutsError,
  missingRolloutsError,
  noResponseError,
  type AgentLevelMetrics,
  type CompletionSummary,
} from './profile';
import { CompletionCounter } from './completion';
import { lineKinds } from './numberKinds';
import { FrameKinds, RolloutNumberKinds } from './pythonTypes';
import { byAgent, CoverageCounter, FanOutDetector, type CoverageEntries } from './coverage';
import type { AgentRollouts } from './repeats';
import { NumberColumn } from './numberColumn';
import { forEachStat, isRow, MASK_SAMPLE, pythonTruthy, RolloutTable } from './table';
import type { PyDict, PyValue } from '../pythonJson';
import {
  compareKeys,
  keyText,
  openCursors,
  type Keyed,
  type ProfiledInput,
  type ProfiledResult,
  type ProfileSources,
} from './sources';

// The sources' importers (the aggregate metrics) name them from here too.
export { NotInKeyOrder, type ProfiledInput, type ProfiledResult, type ProfileSources } from './sources';

// Reward profiling of inputs and results that both come in key order, as a merged stage and NeMo
// Gym's own collection write them: each is read twice, a task at a time, so memory holds one task's
// rollouts and each agent's value columns (a few bytes a rollout) instead of tables of every rollout.
// The rows and errors are profileTables' (profile.ts), which takes anything else: a stream found out
// of order (or with a key twice) stops this with NotInKeyOrder before anything is written.

type Row = Record<string, unknown>;

/** One agent's value columns, its results in key order (NaN where a result lacks the column). */
class AgentCells {
  count = 0;
  readonly columns = new Map<string, NumberColumn>();
  readonly tasks = new NumberColumn();
  readonly rollouts = new NumberColumn();

  add(key: Keyed, result: Row, columns: Set<string>): void {
    this.tasks.set(this.count, key.task);
    this.rollouts.set(this.count, key.rollout);
    forEachStat(result, (key, value) => {
      columns.add(key);
      let column = this.columns.get(key);
      if (!column) this.columns.set(key, (column = new NumberColumn()));
      column.set(this.count, value);
    });
    this.count++;
  }

  cellsOf(column: string): Float64Array {
    const values = this.columns.get(column);
    return Float64Array.from({ length: this.count }, (_, i) => (values ? values.get(i) : NaN));
  }
}

export interface StreamedGroup {
  /** The row as profileTables builds it, its `sample` left out. */
  row: Row;
  /** The row as Python values, as written. */
  typed: PyDict;
}

export interface StreamedProfile {
  summary: CompletionSummary;
  /** Each agent's measured rollouts, for the repeat-level metrics. */
  agentRollouts(): AgentRollouts[];
  coverage(): Map<string, CoverageEntries>;
  /** The stats frame's columns. */
  columns: readonly string[];
  /** Typed agent rows, by agent name in Python's order. */
  agents(): PyDict[];
  /** The group rows in task order; `sampleOf` gets the place of the task's first completed rollout's input line. */
  groups(sampleOf: (input: ProfiledInput) => Promise<PyValue>): AsyncGenerator<StreamedGroup>;
}

/**
 * The first read: the frame (its columns in first-seen order, their kinds), each agent's columns, the
 * completion summary, and upstream's errors in its order (extra results, then missing ones unless
 * partial, then a result without a `response` object).
 */
export async function profileKeyOrdered(
  sources: ProfileSources,
  allowPartialRollouts: boolean,
  gym070 = true,
): Promise<StreamedProfile> {
  const cursors = await openCursors(sources);
  const { inputs, results } = cursors;
  const frame = new FrameKinds();
  const columns = new Set<string>();
  const agents = new Map<string, AgentCells>();
  const extra: string[] = [];
  let extraCount = 0;
  const missing: string[] = [];
  let missingCount = 0;
  let withoutResponse: number | undefined;
  const counter = new CompletionCounter();
  const coverage = new CoverageCounter();
  const fanOut = new FanOutDetector();
  const noteExtra = async (result: ProfiledResult) => {
    if (extraCount++ < 10) extra.push(keyText(result));
    counter.extraResult();
    await results.advance();
  };

  try {
    for (let row = inputs.current; row; row = inputs.current) {
      while (results.current && compareKeys(results.current, row) < 0) await noteExtra(results.current);
      const result = results.current;
      const matched = result !== undefined && compareKeys(result, row) === 0;
      counter.row(row.task, row.agentName, matched);
      const masked = gym070 && matched && pythonTruthy(result.result[MASK_SAMPLE]);
      if (gym070 && !masked) fanOut.add(row.task, row.agentName);
      if (result && matched) {
        if (!isRow(result.result.response)) withoutResponse ??= results.position;
        coverage.add(row.agentName, row.task, masked);
        if (!masked) {
          let cells = agents.get(row.agentName);
          if (!cells) agents.set(row.agentName, (cells = new AgentCells()));
          cells.add(result, result.result, columns);
          frame.add(lineKinds(result.text));
        }
        await results.advance();
      } else if (missingCount++ < 10) {
        missing.push(keyText(row));
      }
      await inputs.advance();
    }
    while (results.current) await noteExtra(results.current);
  } finally {
    await cursors.close();
  }

  if (extraCount > 0) throw extraRolloutsError(extraCount, keysText(extra));
  if (missingCount > 0 && !allowPartialRollouts) throw missingRolloutsError(missingCount, keysText(missing));
  // 0.7.0 profiles such a rollout as one without usage.
  if (withoutResponse !== undefined && !gym070) throw noResponseError(withoutResponse);

  const frameColumns = [...columns];
  return {
    summary: counter.summary(),
    agents: () => {
      const kinds = new RolloutNumberKinds(frame);
      const rows: AgentLevelMetrics[] = agentRows(
        [...agents].map(([name, cells]) => ({ name, cellsOf: (c: string) => cells.cellsOf(c) })),
        frameColumns,
      );
      return rows.map((row) => kinds.agentRow(row));
    },
    agentRollouts: () =>
      [...agents].map(([name, cells]) => ({
        name,
        count: cells.count,
        task: (i: number) => cells.tasks.get(i),
        rollout: (i: number) => cells.rollouts.get(i),
        cellsOf: (c: string) => cells.cellsOf(c),
      })),
    coverage: () => coverage.entries(),
    columns: frameColumns,
    groups: (sampleOf) => groupsOf(sources, frame, frameColumns, sampleOf, { gym070, fanOut: fanOut.fanOut }),
  };
}

interface GroupRules {
  gym070: boolean;
  fanOut: boolean;
}

/** The second read: each task's rollouts in a table of their own, made into its group rows. */
async function* groupsOf(
  sources: ProfileSources,
  frame: FrameKinds,
  columns: readonly string[],
  sampleOf: (input: ProfiledInput) => Promise<PyValue>,
  rules: GroupRules,
): AsyncGenerator<StreamedGroup> {
  const cursors = await openCursors(sources);
  const { inputs, results } = cursors;
  try {
    while (inputs.current) {
      const task = inputs.current.task;
      const rows: ProfiledInput[] = [];
      const done: { input: ProfiledInput; result: ProfiledResult }[] = [];
      for (let row = inputs.current; row && row.task === task; row = inputs.current) {
        const result = results.current;
        const matched = result !== undefined && compareKeys(result, row) === 0;
        if (!(matched && rules.gym070 && pythonTruthy(result.result[MASK_SAMPLE]))) {
          rows.push(row);
          if (matched) done.push({ input: row, result });
        }
        if (matched) await results.advance();
        await inputs.advance();
      }
      const split: [string | undefined, typeof done][] = rules.fanOut
        ? byAgent(done, (d) => d.input.agentName)
        : [[undefined, done]];
      for (const [agent, members] of split) {
        if (members.length === 0) continue;
        const expected = agent === undefined ? rows.length : rows.filter((r) => r.agentName === agent).length;
        yield await groupOf(members, frame, columns, expected, agent, sampleOf);
      }
    }
  } finally {
    await cursors.close();
  }
}

/** One group's row from its measured rollouts in key order. */
async function groupOf(
  members: readonly { input: ProfiledInput; result: ProfiledResult }[],
  frame: FrameKinds,
  columns: readonly string[],
  expected: number,
  agent: string | undefined,
  sampleOf: (input: ProfiledInput) => Promise<PyValue>,
): Promise<StreamedGroup> {
  const table = new RolloutTable(true);
  const kinds = new RolloutNumberKinds(frame);
  for (const { result } of members) kinds.add(table.add(result.task, result.rollout, result.result), result.text);
  const positions = Uint32Array.from({ length: table.length }, (_, i) => i);
  const row = groupRow(table, positions, columns, expected, undefined, agent);
  const typed = kinds.groupRow(row, positions, await sampleOf(members[0]!.input));
  const { sample: _sample, ...stats } = row;
  return { row: stats, typed };
}
