import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { readLines } from '../../gym/jsonl';
import { mkdirDurably, renameDurably } from '../../gym/durable';
import { StagedJsonlFile } from '../../gym/stagedJsonl';
import type { Fence } from '../chunk/fence';
import { claimEarlyFence } from './earlyFence';
import { pauseAt } from '../run/testHooks';

// Where the run's local profile finds the early samples filed for it (activities/early/prefetched.ts
// aligns them): one file of verdicts per chunk, keyed by the row's `task:rollout`, from the first
// pass, and beside it (`tail/`) those of the second.

export function prefetchedDir(outPrefix: string): string {
  return `${outPrefix}_prefetched`;
}

/** The second pass's files, inside the first's directory. */
export const TAIL_DIR = 'tail';

function chunkFileName(chunk: number): string {
  return `chunk-${String(chunk).padStart(6, '0')}.jsonl`;
}

/** Ranges [from, to) of the chunks whose every row has an early sample, fed row by row in order. */
export class WholeChunks {
  readonly ranges: Array<[number, number]> = [];
  /** Rows fed so far. */
  total = 0;
  private chunk = 0;
  private rows = 0;
  private matched = 0;

  constructor(private readonly chunkSize: number) {}

  add(row: number, matched: boolean): void {
    const chunk = Math.floor(row / this.chunkSize);
    if (chunk !== this.chunk) this.close(chunk);
    this.total++;
    this.rows++;
    if (matched) this.matched++;
  }

  finish(): Array<[number, number]> {
    this.close(this.chunk + 1);
    return this.ranges;
  }

  private close(next: number): void {
    if (this.rows > 0 && this.matched === this.rows) {
      const last = this.ranges.at(-1);
      if (last && last[1] === this.chunk) last[1]++;
      else this.ranges.push([this.chunk, this.chunk + 1]);
    }
    this.chunk = next;
    this.rows = 0;
    this.matched = 0;
  }
}

/** Ranges [from, to) of chunks, less the given chunks. */
export function withoutChunks(ranges: Array<[number, number]>, drop: ReadonlySet<number>): Array<[number, number]> {
  const kept: Array<[number, number]> = [];
  for (const [from, to] of ranges) {
    let start = from;
    for (let chunk = from; chunk <= to; chunk++) {
      if (chunk < to && !drop.has(chunk)) continue;
      if (chunk > start) kept.push([start, chunk]);
      start = chunk + 1;
    }
  }
  return kept;
}

/** A run row as the alignment walks it: its place in the stage, the key its chunk files it under, its line. */
export interface RunRow {
  index: number;
  id: string;
  text: string;
}

/**
 * The filed verdicts, one file per chunk, in a directory built under this attempt's own name and
 * renamed into place whole: an older attempt still running (a partitioned worker) writes only into
 * its own directory.
 */
export class FiledChunks {
  readonly staging: string;
  private out: { chunk: number; file: StagedJsonlFile } | undefined;

  constructor(
    private readonly dir: string,
    private readonly chunkSize: number,
  ) {
    this.staging = `${dir}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  }

  async open(): Promise<void> {
    await mkdirDurably(this.staging);
  }

  /** Rows come in stage order, so a chunk's file is complete when the next chunk's row comes. */
  async file(row: RunRow, verdict: string): Promise<void> {
    const chunk = Math.floor(row.index / this.chunkSize);
    if (this.out?.chunk !== chunk) {
      await this.out?.file.commit();
      this.out = { chunk, file: new StagedJsonlFile(path.join(this.staging, chunkFileName(chunk))) };
    }
    // Only the verdict: the chunk writes it on the run's own row, so that is all it reads.
    await this.out.file.writeLine(`${row.id}\t${verdict}\n`);
  }

  /**
   * Replaces the filed directory with this pass's, right after a look at the fence: a pass that woke
   * after a newer one (its own retry, the second pass, the removal once the run is done) stops here
   * instead of wiping what that one filed.
   */
  async commit(fence: Fence): Promise<void> {
    await this.out?.file.commit();
    await pauseAt('filing.committing', fence.token.name);
    await fence.check();
    await rm(this.dir, { recursive: true, force: true });
    await renameDurably([[this.staging, this.dir]]);
  }

  async abort(): Promise<void> {
    await this.out?.file.abort();
    await rm(this.staging, { recursive: true, force: true });
  }
}

/** Runs a fenced pass over the run's rows, the filed chunks dropped unless the pass completes. */
export async function filing<T>(outPrefix: string, filed: FiledChunks, pass: () => Promise<T>): Promise<T> {
  const fence = await claimEarlyFence(outPrefix, `early samples of ${outPrefix}`);
  await filed.open();
  try {
    const result = await pass();
    await filed.commit(fence);
    return result;
  } catch (err) {
    await filed.abort();
    throw err;
  }
}

/** The early samples matched to a chunk's rows, by `task:rollout` (both passes); none when there is no file. */
export async function readPrefetched(outPrefix: string, chunk: number): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const dir = prefetchedDir(outPrefix);
  for (const file of [path.join(dir, chunkFileName(chunk)), path.join(dir, TAIL_DIR, chunkFileName(chunk))]) {
    try {
      for await (const { text, terminated } of readLines(file)) {
        const cut = text.indexOf('\t');
        // Only whole lines: a row without one is sampled live, which is never wrong.
        if (cut > 0 && terminated) found.set(text.slice(0, cut), text.slice(cut + 1));
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return found;
}
