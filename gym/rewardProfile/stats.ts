// Per-group column statistics as NeMo Gym's RewardProfiler gets them from pandas (`describe_dataframe`):
// the same reductions, the same skip-missing rules and numpy's pairwise summation, so float results
// agree to the last bit rather than only approximately. Upstream's histograms are left out: they are
// W&B objects that `prepare_for_serialization` drops before anything is written.

/** A column over some rollouts; NaN is pandas' missing value (a rollout without the field). */
export type Cells = Float64Array;

export const STATS = ['mean', 'max', 'min', 'median', 'std'] as const;
export type StatName = (typeof STATS)[number];

const PAIRWISE_BLOCK = 128;

/** numpy's `add.reduce` on float64: pairwise summation with an 8-way unrolled base case. */
export function pairwiseSum(values: ArrayLike<number>, from = 0, to = values.length): number {
  const n = to - from;
  if (n < 8) {
    let sum = 0;
    for (let i = from; i < to; i++) sum += values[i]!;
    return sum;
  }
  if (n <= PAIRWISE_BLOCK) {
    const r = Float64Array.from({ length: 8 }, (_, j) => values[from + j]!);
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

function present(cells: Cells): Float64Array {
  return cells.filter((c) => !Number.isNaN(c));
}

/** pandas `nanmean`: missing values are summed as 0 (they still occupy their place in the pairwise tree). */
function mean(cells: Cells, count: number): number {
  if (count === 0) return NaN;
  return pairwiseSum(cells.map((c) => (Number.isNaN(c) ? 0 : c))) / count;
}

/** pandas `nanvar` two-pass algorithm with ddof = 1, then the square root. */
function std(cells: Cells, count: number): number {
  if (count <= 1) return NaN;
  const avg = mean(cells, count);
  return Math.sqrt(pairwiseSum(cells.map((c) => (Number.isNaN(c) ? 0 : (avg - c) ** 2))) / (count - 1));
}

function maxOf(values: Float64Array): number {
  return values.reduce((a, b) => (b > a ? b : a));
}

function minOf(values: Float64Array): number {
  return values.reduce((a, b) => (b < a ? b : a));
}

/** Sorts `values` in place. */
function median(values: Float64Array): number {
  if (values.length === 0) return NaN;
  const sorted = values.sort();
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The `<stat>/<column>` entries of one group, in upstream order (stat-major, columns in table order),
 * with missing stats left out. When no column has a std (always so for a single rollout) the std of
 * every column without a missing value becomes 0.0, which reads better than no std at all.
 */
export function describeGroup(columns: readonly string[], cellsOf: (column: string) => Cells): [string, number][] {
  const perColumn = columns.map((column) => {
    const cells = cellsOf(column);
    const values = present(cells);
    const stats: Record<StatName, number> = {
      mean: mean(cells, values.length),
      max: values.length > 0 ? maxOf(values) : NaN,
      min: values.length > 0 ? minOf(values) : NaN,
      std: std(cells, values.length),
      median: median(values),
    };
    return { column, complete: values.length === cells.length, stats };
  });
  if (perColumn.every((c) => Number.isNaN(c.stats.std))) {
    for (const c of perColumn) if (c.complete) c.stats.std = 0;
  }
  const entries: [string, number][] = [];
  for (const stat of STATS) {
    for (const { column, stats } of perColumn) {
      if (!Number.isNaN(stats[stat])) entries.push([`${stat}/${column}`, stats[stat]]);
    }
  }
  return entries;
}
