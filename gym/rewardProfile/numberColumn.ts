// A column of numbers for the reward profile's tables (table.ts): as narrow a typed array as its
// values allow, so a million rollouts cost a few megabytes a column instead of an object each.

type Slots = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** Integer widths from narrowest, each marking a never-set slot with the one value it cannot hold then. */
const WIDTHS = [
  { make: (n: number) => new Uint8Array(n), unset: 0xff },
  { make: (n: number) => new Uint16Array(n), unset: 0xffff },
  { make: (n: number) => new Uint32Array(n), unset: 0xffffffff },
] as const;

/**
 * A column of numbers that grows as it fills, reading NaN (pandas' missing value) where never set.
 * It takes 1, 2 or 4 bytes a row while every value is an unsigned integer that fits (rollout
 * indices, 0/1 rewards, token counts, keys), and widens to 8 once one is not.
 */
export class NumberColumn {
  // Small to start: a profile built a task at a time makes columns of a handful of rows.
  private data: Slots = new Uint8Array(16).fill(WIDTHS[0].unset);
  /** NaN once the column is Float64, where never-set slots hold NaN itself. */
  private unset: number = WIDTHS[0].unset;

  get(i: number): number {
    if (i >= this.data.length) return NaN;
    const x = this.data[i]!;
    return x === this.unset ? NaN : x;
  }

  set(i: number, x: number): void {
    if (!Number.isNaN(this.unset) && !(x >>> 0 === x && x < this.unset && !Object.is(x, -0))) this.widen(x);
    if (i >= this.data.length) this.data = this.copied(Math.max(i + 1, this.data.length * 2), this.unset);
    this.data[i] = x;
  }

  /** To the narrowest width that holds `x` and every value so far. */
  private widen(x: number): void {
    const fits = x >>> 0 === x && !Object.is(x, -0);
    const unset = WIDTHS.find((w) => w.unset > this.unset && fits && x < w.unset)?.unset ?? NaN;
    this.data = this.copied(this.data.length, unset);
    this.unset = unset;
  }

  /** The slots in a new array of `size` of the width whose never-set mark is `unset` (NaN: Float64). */
  private copied(size: number, unset: number): Slots {
    const width = WIDTHS.find((w) => w.unset === unset);
    const next = width ? width.make(size).fill(unset) : new Float64Array(size).fill(NaN);
    const old = this.data;
    if (Object.is(unset, this.unset)) next.set(old);
    else for (let i = 0; i < old.length; i++) next[i] = old[i] === this.unset ? unset : old[i]!;
    return next;
  }
}
