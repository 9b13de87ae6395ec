// Per-group column statistics as NeMo Gym's RewardProfiler gets them from pandas (`describe_dataframe`):
// the same reductions, the same skip-missing rules and numpy's pairwise summation, so float results
// agree to the last bit rather than only approximately.

/** A column value in one rollout record; `undefined` is pandas' missing value (NaN). */
export type Cell = number | undefined;

/** A W&B-style histogram (numpy's 64 equal-width bins); never serialized, as upstream drops it. */
export interface Histogram {
  bins: number[];
  histogram: number[];
}

export type StatValue = number | Histogram;

export const STATS = ['mean', 'max', 'min', 'median', 'std', 'histogram'] as const;
export type StatName = (typeof STATS)[number];

const PAIRWISE_BLOCK = 128;

/** numpy's `add.reduce` on float64: pairwise summation with an 8-way unrolled base case. */
export function pairwiseSum(values: readonly number[], from = 0, to = values.length): number {
  const n = to - from;
  if (n < 8) {
    let sum = 0;
    for (let i = from; i < to; i++) sum += values[i]!;
    return sum;
  }
  if (n <= PAIRWISE_BLOCK) {
    const r = values.slice(from, from + 8);
    let i = from + 8;
    for (; i < to - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j]! += values[i + j]!;
    }
    let sum = ((r[0]! + r[1]!) + (r[2]! + r[3]!)) + ((r[4]! + r[5]!) + (r[6]! + r[7]!));
    for (; i < to; i++) sum += values[i]!;
    return sum;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSum(values, from, from + half) + pairwiseSum(values, from + half, to);
}

function present(cells: readonly Cell[]): number[] {
  return cells.filter((c): c is number => c !== undefined && !Number.isNaN(c));
}

/** pandas `nanmean`: missing values are summed as 0 (they still occupy their place in the pairwise tree). */
function mean(cells: readonly Cell[], count: number): number {
  if (count === 0) return NaN;
  return pairwiseSum(cells.map((c) => (c === undefined || Number.isNaN(c) ? 0 : c))) / count;
}

/** pandas `nanvar` two-pass algorithm with ddof = 1, then the square root. */
function std(cells: readonly Cell[], count: number): number {
  if (count <= 1) return NaN;
  const avg = mean(cells, count);
  const squares = cells.map((c) => (c === undefined || Number.isNaN(c) ? 0 : (avg - c) ** 2));
  return Math.sqrt(pairwiseSum(squares) / (count - 1));
}

function maxOf(values: readonly number[]): number {
  return values.reduce((a, b) => (b > a ? b : a));
}

function minOf(values: readonly number[]): number {
  return values.reduce((a, b) => (b < a ? b : a));
}

function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** numpy `histogram(values, bins=64)` on uniform bins, including its edge corrections. */
export function histogram(values: readonly number[], bins = 64): Histogram | undefined {
  if (values.length === 0) return undefined;
  let first = minOf(values);
  let last = maxOf(values);
  if (first === last) {
    first -= 0.5;
    last += 0.5;
  }
  const step = (last - first) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => i * step + first);
  edges[bins] = last;
  const counts = new Array<number>(bins).fill(0);
  const norm = bins / (last - first);
  for (const x of values) {
    let i = Math.trunc((x - first) * norm);
    if (i === bins) i--;
    if (x < edges[i]!) i--;
    else if (i !== bins - 1 && x >= edges[i + 1]!) i++;
    counts[i]!++;
  }
  return { bins: edges, histogram: counts };
}

/**
 * The `<stat>/<column>` entries of one group, in upstream order (stat-major, columns in table order),
 * with missing stats left out. When no column has a std (always so for a single rollout) the std of
 * every column without a missing value becomes 0.0, which reads better than no std at all.
 */
export function describeGroup(columns: readonly string[], cellsByColumn: ReadonlyMap<string, Cell[]>): [string, StatValue][] {
  const perColumn = columns.map((column) => {
    const cells = cellsByColumn.get(column) ?? [];
    const values = present(cells);
    return {
      column,
      complete: values.length === cells.length,
      stats: {
        mean: mean(cells, values.length),
        max: values.length > 0 ? maxOf(values) : NaN,
        min: values.length > 0 ? minOf(values) : NaN,
        median: median(values),
        std: std(cells, values.length),
        histogram: histogram(values),
      } satisfies Record<StatName, StatValue | undefined>,
    };
  });
  if (perColumn.every((c) => Number.isNaN(c.stats.std))) {
    for (const c of perColumn) if (c.complete) c.stats.std = 0;
  }
  const entries: [string, StatValue][] = [];
  for (const stat of STATS) {
    for (const { column, stats } of perColumn) {
      const value = stats[stat];
      if (value !== undefined && !(typeof value === 'number' && Number.isNaN(value))) entries.push([`${stat}/${column}`, value]);
    }
  }
  return entries;
}
