import type { PyDict, PyValue } from '../pythonJson';
import type { CoverageEntries } from './coverage';
import { comparePython } from './profile';
import { extremes, mean, median, std, type Cells } from './stats';
import { pythonPowHalf } from './powHalf';
import { tInterval95 } from './studentT';

// NeMo Gym 0.7.0's repeat-level metrics: for each agent with more than one rollout index, the
// summary of each column over the tasks of one repeat (`_repeat_level_metrics.json`), and then each
// repeat's point estimates summarized across the repeats, which join the agent's row as
// `<stat>_across_repeats/<metric>`. Every statistic is a float, as NeMo Gym converts each one.

/** One agent's measured rollouts in key order: their keys and value columns (NaN where absent). */
export interface AgentRollouts {
  name: string;
  count: number;
  task(i: number): number;
  rollout(i: number): number;
  cellsOf(column: string): Cells;
}

/** numpy's default (linear) quantile of ascending `sorted`, interpolated as its `_lerp` does. */
export function linearQuantile(sorted: Cells, q: number): number {
  const n = sorted.length;
  const at = (n - 1) * q;
  if (at >= n - 1) return sorted[n - 1]!;
  const below = Math.floor(at);
  const a = sorted[below]!;
  const b = sorted[below + 1]!;
  const gamma = at - below;
  const diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

/** Mean, std (0.0 for one value), its standard error and the 95% t-interval, as NeMo Gym pairs them. */
function spread(values: Cells): { mean: number; std: number; se: number; ci?: [number, number] } {
  const n = values.length;
  const avg = mean(values, n);
  const sd = n > 1 ? std(values, n) : 0;
  const se = sd / pythonPowHalf(n);
  if (n <= 1) return { mean: avg, std: sd, se };
  return { mean: avg, std: sd, se, ci: se === 0 ? [avg, avg] : tInterval95(avg, se, n) };
}

const present = (cells: Cells): Cells => cells.filter((c) => !Number.isNaN(c));

/** The entries of one column of one repeat, in NeMo Gym's order. */
function repeatColumnEntries(column: string, values: Cells): [string, number][] {
  const { mean: avg, std: sd, se, ci } = spread(values);
  const { max, min } = extremes(values);
  const sorted = values.slice().sort();
  const entries: [string, number][] = [
    [`mean/${column}`, avg],
    [`median/${column}`, median(sorted, sorted.length)],
    [`std/${column}`, sd],
    [`sem/${column}`, se],
    [`min/${column}`, min],
    [`max/${column}`, max],
    [`p25/${column}`, linearQuantile(sorted, 0.25)],
    [`p75/${column}`, linearQuantile(sorted, 0.75)],
  ];
  if (ci) entries.push([`ci_low_95/${column}`, ci[0]], [`ci_high_95/${column}`, ci[1]]);
  return entries;
}

/** One agent's repeat rows, by rollout index; none when it has a single rollout index. */
function agentRepeatRows(agent: AgentRollouts, columns: readonly string[]): PyDict[] {
  const byRollout = new Map<number, number[]>();
  const tasks = new Set<number>();
  for (let i = 0; i < agent.count; i++) {
    tasks.add(agent.task(i));
    const members = byRollout.get(agent.rollout(i)) ?? [];
    members.push(i);
    byRollout.set(agent.rollout(i), members);
  }
  if (byRollout.size <= 1) return [];
  const cells = new Map(columns.map((c) => [c, agent.cellsOf(c)]));
  return [...byRollout.keys()]
    .sort((a, b) => a - b)
    .map((rollout) => {
      const members = byRollout.get(rollout)!;
      const presentTasks = new Set(members.map((i) => agent.task(i))).size;
      const row: PyDict = new Map<string, PyValue>([
        ['agent_ref', new Map([['name', agent.name]])],
        ['_ng_rollout_index', BigInt(rollout)],
        ['sample_count', BigInt(presentTasks)],
        ['missing_count', BigInt(tasks.size - presentTasks)],
      ]);
      for (const column of columns) {
        const values = Float64Array.from(members, (i) => cells.get(column)![i]!).filter((c) => !Number.isNaN(c));
        if (values.length > 0) for (const [k, v] of repeatColumnEntries(column, values)) row.set(k, v);
      }
      return row;
    });
}

/** `repeat_level_metrics`: agents in Python's name order; columns sorted, as pandas' `Index.difference` leaves them. */
export function repeatLevelRows(agents: readonly AgentRollouts[], columns: readonly string[]): PyDict[] {
  const sortedColumns = [...columns].sort(comparePython);
  return [...agents]
    .sort((a, b) => comparePython(a.name, b.name))
    .flatMap((agent) => agentRepeatRows(agent, sortedColumns));
}

const NOT_ESTIMATES = [
  'max',
  'min',
  'median',
  'std',
  'sem',
  'se',
  'p25',
  'p75',
  'ci_low_95',
  'ci_high_95',
  'histogram',
];
const EXCLUDED_SUFFIXES = [
  ...['/max', '/min', '/median', '/p5', '/p25', '/p75', '/p95', '/ci_low_95', '/ci_high_95', '/ci_lower', '/ci_upper'],
  ...['_ci_lower', '_ci_upper', '_ci95_lower', '_ci95_upper', '/_ng_attempt_index'],
  ...['/std_dev_across_runs', '/std_err_across_runs', '/avg_sample_std_dev'],
];
const EXCLUDED_NAMES = new Set([
  ...['_ng_task_index', '_ng_rollout_index', '_ng_attempt_index'],
  ...['sample_count', 'missing_count', 'num_repeats', 'token_usage_version'],
]);

/** NeMo Gym's `is_primary_metric`: a point estimate, not a spread, bound, count or key. */
export function isPrimaryMetric(name: string): boolean {
  return (
    !EXCLUDED_NAMES.has(name) &&
    !NOT_ESTIMATES.some((stat) => name.startsWith(`${stat}/`)) &&
    !EXCLUDED_SUFFIXES.some((suffix) => name.endsWith(suffix)) &&
    !name.includes('_across_repeats/')
  );
}

/** Each agent's `<stat>_across_repeats/<metric>` entries, from its repeat rows. */
export function acrossRepeats(repeatRows: readonly PyDict[]): Map<string, [string, number][]> {
  const metrics = [...new Set(repeatRows.flatMap((row) => [...row.keys()]))].filter(
    (k) => isPrimaryMetric(k) && repeatRows.some((row) => typeof row.get(k) === 'number'),
  );
  const byAgent = new Map<string, PyDict[]>();
  for (const row of repeatRows) {
    const name = (row.get('agent_ref') as PyDict).get('name') as string;
    byAgent.set(name, [...(byAgent.get(name) ?? []), row]);
  }
  const out = new Map<string, [string, number][]>();
  for (const [name, rows] of byAgent) {
    const entries: [string, number][] = [];
    for (const metric of metrics) {
      const values = present(Float64Array.from(rows, (row) => (row.get(metric) as number | undefined) ?? NaN));
      if (values.length === 0) continue;
      const { mean: avg, std: sd, se, ci } = spread(values);
      const { max, min } = extremes(values);
      const sorted = values.slice().sort();
      entries.push(
        [`mean_across_repeats/${metric}`, avg],
        [`median_across_repeats/${metric}`, median(sorted, sorted.length)],
        [`std_across_repeats/${metric}`, sd],
        [`min_across_repeats/${metric}`, min],
        [`max_across_repeats/${metric}`, max],
        [`se_across_repeats/${metric}`, se],
      );
      if (ci)
        entries.push([`ci_low_95_across_repeats/${metric}`, ci[0]], [`ci_high_95_across_repeats/${metric}`, ci[1]]);
    }
    out.set(name, entries);
  }
  return out;
}

/**
 * The agent rows NeMo Gym 0.7.0 writes and its repeat rows: each agent's row gains its
 * across-repeats entries, then its coverage; an agent whose every rollout was masked is kept as a
 * row of coverage alone, after the others.
 */
export function gym070AgentRows(
  agentRows: readonly PyDict[],
  rollouts: readonly AgentRollouts[],
  columns: readonly string[],
  coverage: Map<string, CoverageEntries>,
): { agents: PyDict[]; repeats: PyDict[] } {
  const repeats = repeatLevelRows(rollouts, columns);
  const across = acrossRepeats(repeats);
  const agents = agentRows.map((row) => {
    const name = String(agentRefName(row));
    const out: PyDict = new Map([...row, ...(across.get(name) ?? []), ...(coverage.get(name) ?? [])]);
    coverage.delete(name);
    return out;
  });
  for (const [name, entries] of coverage)
    agents.push(new Map<string, PyValue>([['agent_ref', new Map([['name', name]])], ...entries]));
  return { agents, repeats };
}

function agentRefName(row: PyDict): unknown {
  const ref = row.get('agent_ref') as unknown;
  return ref instanceof Map ? ref.get('name') : (ref as { name?: unknown } | undefined)?.name;
}
