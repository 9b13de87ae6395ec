// The validator's unit of work: a fixed byte range of the file (a chunk), put through the fast path
// by whichever thread claims it. What comes back is small whatever the chunk holds: how many lines
// start in it, the counts of the rows the fast path accepted, and where the other lines are, for
// the caller to run through the exact path in file order. A chunk's line numbers are its own count
// plus the line counts of the chunks before it, which the caller knows by then.
import { acceptLineFast, type FastRowOptions } from './fastRows';
import type { JsonlFile } from './jsonlLines';
import { PivotMetrics, type MetricsCounts } from './metrics';

/** Small enough that threads finish close together and an early failure is found soon, large
 * enough that claiming and reporting a chunk costs nothing next to checking it. */
export const CHUNK_BYTES = 2 << 20;

export const chunkCount = (fileSize: number) => Math.ceil(fileSize / CHUNK_BYTES);

export interface ChunkVerdicts {
  index: number;
  /** How many lines start in the chunk. */
  lines: number;
  /** The rows the fast path accepted. */
  counts: MetricsCounts;
  /** The lines left to the exact path, in order, four numbers each: file offset, byte length, line
   * number within the chunk (from 1), and 1 if the line was terminated, else 0. */
  exact: number[];
}

/** `fileSize` is the size the chunks were planned on, the same in every thread. */
export function checkChunk(file: JsonlFile, index: number, fileSize: number, options: FastRowOptions): ChunkVerdicts {
  const metrics = new PivotMetrics();
  const exact: number[] = [];
  let line = 0;
  const from = index * CHUNK_BYTES;
  const lines = file.lines(from, Math.min(from + CHUNK_BYTES, fileSize), (span) => {
    line++;
    const outcome = acceptLineFast(span, options);
    if (outcome === 'blank') return;
    if (outcome === undefined) exact.push(span.offset, span.end - span.start, line, span.terminated ? 1 : 0);
    else metrics.add(outcome);
  });
  return { index, lines, counts: metrics.counts, exact };
}
