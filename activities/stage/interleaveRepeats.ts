import { open, rm } from 'node:fs/promises';
import { JsonlWriter } from '../../gym/jsonl';
import type { MaterializedRecord } from '../../gym/materialize';
import { environmentServerStamp } from '../../gym/runLabels';

// NeMo Gym 0.7.0's `interleave_repeats`: the materialized rows, in the order they are written and
// dispatched, go round by round (abcabc) instead of each task's repeats back to back (aabbcc). 0.7.0
// does it with a stable sort of the expanded rows by `_ng_rollout_index`, so a duplicate input line,
// whose repeats continue its task's rollout indices, lands in the later rounds; this is that sort.

/** What materializing writes and indexes of one row. */
export interface MaterializedLine {
  task: number;
  rollout: number;
  agentName: string;
  /** The row's `_ng_environment_server`, when its data (or legacy routing) stamps one. */
  environmentServer?: string;
  /** The row's `task_source`, which a stamped row's environment server may have to match. */
  taskSource?: string;
  /** The input line the row came from, for errors that name it. */
  line: number;
  text: string;
}

function lineOf({ row, text, line }: MaterializedRecord): MaterializedLine {
  const environmentServer = environmentServerStamp(row);
  const taskSource = (row as Record<string, unknown>).task_source;
  return {
    task: row._ng_task_index,
    rollout: row._ng_rollout_index,
    agentName: row.agent_ref.name,
    ...(environmentServer === undefined ? {} : { environmentServer }),
    ...(typeof taskSource === 'string' ? { taskSource } : {}),
    line,
    text,
  };
}

/** The records as lines, in the order they came. */
export async function* inInputOrder(records: AsyncIterable<MaterializedRecord>): AsyncGenerator<MaterializedLine> {
  for await (const record of records) yield lineOf(record);
}

interface Placed extends Omit<MaterializedLine, 'text'> {
  offset: number;
  length: number;
}

/**
 * The records as lines, stably sorted by rollout index. The sort needs every row before the first
 * is known, so the rows go to `scratchFile` first and memory holds each row's place, not the row;
 * the scratch file is removed when the lines have been read, or the reading is abandoned.
 */
export async function* interleaved(
  records: AsyncIterable<MaterializedRecord>,
  scratchFile: string,
): AsyncGenerator<MaterializedLine> {
  const placed: Placed[] = [];
  try {
    const writer = await JsonlWriter.open(scratchFile);
    try {
      for await (const record of records) {
        const { text, ...rest } = lineOf(record);
        const offset = writer.bytesWritten;
        await writer.writeLine(text);
        placed.push({ ...rest, offset, length: writer.bytesWritten - offset });
      }
    } finally {
      await writer.close();
    }
    // Array.prototype.sort is stable, as Python's list.sort is.
    placed.sort((a, b) => a.rollout - b.rollout);
    const fh = await open(scratchFile, 'r');
    try {
      for (const { offset, length, ...rest } of placed) {
        const buf = Buffer.alloc(length);
        await fh.read(buf, 0, length, offset);
        yield { ...rest, text: buf.toString('utf8') };
      }
    } finally {
      await fh.close();
    }
  } finally {
    await rm(scratchFile, { force: true });
  }
}
