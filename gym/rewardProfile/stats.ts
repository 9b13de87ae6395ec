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
  return pairwiseSumOf(values, (x) => x, from, to);
}

/**
 * The pairwise sum of `term` of each value, in numpy's order. Taking the term rather than a mapped
 * copy keeps a million-rollout column from being copied once per reduction (8 MB each, freed only
 * when V8 next collects): the agent rows of a large stage set the tail's peak memory.
 */
function pairwiseSumOf(values: ArrayLike<number>, term: (x: number) => number, from: number, to: number): number {
  const n = to - from;
  if (n < 8) {
    let sum = 0;
    for (let i = from; i < to; i++) sum += term(values[i]!);
    return sum;
  }
  if (n <= PAIRWISE_BLOCK) {
    const r = Float64Array.from({ length: 8 }, (_, j) => term(values[from + j]!));
    let i = from + 8;
    for (; i < to - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j]! += term(values[i + j]!);
    }
    let sum = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < to; i++) sum += term(values[i]!);
    return sum;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSumOf(values, term, from, from + half) + pairwiseSumOf(values, term, from + half, to);
}

/** pandas `nanmean`: missing values are summed as 0 (they still occupy their place in the pairwise tree). */
export function mean(cells: Cells, count: number): number {
  if (count === 0) return NaN;
  return pairwiseSumOf(cells, (c) => (Number.isNaN(c) ? 0 : c), 0, cells.length) / count;
}

/** pandas `nanvar` two-pass algorithm with ddof = 1, then the square root. */
export function std(cells: Cells, count: number): number {
  if (count <= 1) return NaN;
  const avg = mean(cells, count);
  return Math.sqrt(pairwiseSumOf(cells, (c) => (Number.isNaN(c) ? 0 : (avg - c) ** 2), 0, cells.length) / (count - 1));
}

/** The present values' max and min, NaN when there are none; the first of equal values wins, as in a left fold. */
export function extremes(cells: Cells): { max: number; min: number } {
  let max = NaN;
  let min = NaN;
  for (const c of cells) {
    if (Number.isNaN(c)) continue;
    if (Number.isNaN(max) || c > max) max = c;
    if (Number.isNaN(min) || c < min) min = c;
  }
  return { max, min };
}

/** The present values' median. Sorts `cells` in place when none is missing, so call it last. */
export function median(cells: Cells, count: number): number {
  if (count === 0) return NaN;
  const sorted = (count === cells.length ? cells : cells.filter((c) => !Number.isNaN(c))).sort();
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function presentCount(cells: Cells): number {
  let count = 0;
  for (const c of cells) if (!Number.isNaN(c)) count++;
  return count;
}

/**
 * The `<stat>/<column>` entries of one group, in upstream order (stat-major, columns in table order),
 * with missing stats left out. When no column has a std (always so for a single rollout) the std of
 * every column without a missing value becomes 0.0, which reads better than no std at all.
 * `cellsOf` gives a fresh array each call: the median sorts it.
 */
export function describeGroup(columns: readonly string[], cellsOf: (column: string) => Cells): [string, number][] {
  const perColumn = columns.map((column) => {
    const cells = cellsOf(column);
    const count = presentCount(cells);
    const { max, min } = extremes(cells);
    // The sums read the cells in their rollouts' order (numpy's pairwise tree), before the median sorts them.
    const sums = { mean: mean(cells, count), std: std(cells, count) };
    const stats: Record<StatName, number> = { ...sums, max, min, median: median(cells, count) };
    return { column, complete: count === cells.length, stats };
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
