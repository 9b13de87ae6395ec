import { open, type FileHandle } from 'node:fs/promises';
import { renameDurably } from '../../gym/durable';
import { onFile } from '../../gym/fileError';

// The row index of a materialized inputs file: per row its key, its agent and where its line is,
// as fixed-size binary records. The stages after the chunks need only these few fields of a row
// (the merge its key order, reward profiling its keys, agents and sample lines), and reading them
// here costs a few bytes a row where decoding the row's JSON costs the whole prompt and tool list.
// A row's agent is an index into names that pair an agent with the environment server its data
// stamps on it (`_ng_environment_server`, NeMo Gym 0.7.0's group for the row), if any.

/** task, rollout, agent (an index into the agent names), byte offset and byte length of the line. */
const FIELDS = 5;
const RECORD_BYTES = FIELDS * 8;
/** Records read or written per system call. */
const BATCH_RECORDS = 4096;

export interface IndexedRow {
  task: number;
  rollout: number;
  agentName: string;
  /** The environment server the row's data stamps on it, read back only when the reader asks. */
  environmentServer?: string;
  byteOffset: number;
  byteLength: number;
}

/** What a row index's agent indexes name: per index an agent and its rows' stamp (null: none). */
export interface RowIndexNames {
  agentNames: string[];
  environmentServers: (string | null)[];
}

export function rowIndexPath(outPrefix: string): string {
  return `${outPrefix}_materialized_inputs.rows.bin`;
}

/** Written under a temporary name and renamed by `close`, so a present index is a whole one. */
export class RowIndexWriter {
  private readonly batch = new Float64Array(BATCH_RECORDS * FIELDS);
  private filled = 0;
  private readonly agentIds = new Map<string, number>();
  private readonly names: RowIndexNames = { agentNames: [], environmentServers: [] };

  private constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  static async create(outPrefix: string): Promise<RowIndexWriter> {
    const file = rowIndexPath(outPrefix);
    return new RowIndexWriter(file, await open(`${file}.tmp`, 'w'));
  }

  async add(row: IndexedRow): Promise<void> {
    const pair = JSON.stringify([row.agentName, row.environmentServer ?? null]);
    let agent = this.agentIds.get(pair);
    if (agent === undefined) {
      this.agentIds.set(pair, (agent = this.agentIds.size));
      this.names.agentNames.push(row.agentName);
      this.names.environmentServers.push(row.environmentServer ?? null);
    }
    this.batch.set([row.task, row.rollout, agent, row.byteOffset, row.byteLength], this.filled * FIELDS);
    if (++this.filled === BATCH_RECORDS) await this.flush();
  }

  private async flush(): Promise<void> {
    const batch = new Uint8Array(this.batch.buffer, 0, this.filled * RECORD_BYTES);
    await onFile(`${this.file}.tmp`, () => this.handle.write(batch));
    this.filled = 0;
  }

  /** Finishes the index and returns the names its records point into. */
  async close(): Promise<RowIndexNames> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
    await renameDurably([[`${this.file}.tmp`, this.file]]);
    return this.names;
  }

  /** Drops an unfinished index (the materialization it belonged to failed). */
  async abandon(): Promise<void> {
    await this.handle.close();
  }
}

/** Rows [from, to) of the index, in materialized order, with their stamps when `environmentServers` is given. */
export async function* readRowIndex(
  outPrefix: string,
  agentNames: readonly string[],
  from = 0,
  to = Infinity,
  environmentServers?: readonly (string | null)[],
): AsyncGenerator<IndexedRow> {
  const handle = await open(rowIndexPath(outPrefix), 'r');
  try {
    const end = Math.min(to, (await handle.stat()).size / RECORD_BYTES);
    const batch = new Float64Array(BATCH_RECORDS * FIELDS);
    const bytes = new Uint8Array(batch.buffer);
    for (let row = from; row < end;) {
      const count = Math.min(BATCH_RECORDS, end - row);
      const { bytesRead } = await handle.read(bytes, 0, count * RECORD_BYTES, row * RECORD_BYTES);
      if (bytesRead < count * RECORD_BYTES)
        throw new Error(`${rowIndexPath(outPrefix)}: ends before row ${row + count}`);
      for (let i = 0; i < count; i++) {
        const at = i * FIELDS;
        const stamp = environmentServers?.[batch[at + 2]!];
        yield {
          task: batch[at]!,
          rollout: batch[at + 1]!,
          agentName: agentNames[batch[at + 2]!]!,
          ...(typeof stamp === 'string' ? { environmentServer: stamp } : {}),
          byteOffset: batch[at + 3]!,
          byteLength: batch[at + 4]!,
        };
      }
      row += count;
    }
  } finally {
    await handle.close();
  }
}
