import { open, rm, type FileHandle } from 'node:fs/promises';
import { renameDurably, syncFile } from '../durable';
import { JsonlWriter } from '../jsonl';
import { orjsonDumps } from '../pythonJsonDumps';
import { pyStr, type Index, type RolloutDigest } from './rolloutDigest';
import type { HealthReducer } from './summary';

// 0.7.0's rollout_verdicts.jsonl: one row per record with its verdict, findings and unobserved
// checks, sorted by (task, rollout, stage) index. Rows are written as records come, to a scratch
// file, and copied out in order at the end (or renamed, when they came in order), so what is held
// per record is where its row lies.

export function verdictRow(d: RolloutDigest): string {
  const findings = d.findings.map((f) => ({ check: f.check, locator: f.locator, detail: f.detail }));
  const row = {
    _ng_task_index: d.taskIndex,
    _ng_rollout_index: d.rolloutIndex,
    rollout_id: d.rolloutId,
    verdict: d.verdict,
    findings,
    unobserved: d.unobserved,
    ...(d.stageIndex !== null ? { stage_index: d.stageIndex } : {}),
  };
  return `${orjsonDumps(row)}\n`;
}

/** A row of a record whose identity others claim too: unhealthy, with the duplicate check's finding last. */
function withDuplicates(line: string, count: number): string {
  const row = JSON.parse(line) as { verdict: string; findings: unknown[] };
  row.verdict = 'unhealthy';
  row.findings.push({ check: 'rollout_duplicate_identity', detail: { duplicate_count: count } });
  return `${orjsonDumps(row)}\n`;
}

type Part = [0, number] | [1, string];

/** 0.7.0's sort key of an index: integers by value before everything else by its text. */
function part(value: Index): Part {
  if (typeof value === 'boolean') return [0, value ? 1 : 0];
  return typeof value === 'number' && Number.isInteger(value) ? [0, value] : [1, pyStr(value)];
}

function compareParts(a: readonly Part[], b: readonly Part[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i]![0] !== b[i]![0]) return a[i]![0] - b[i]![0];
    if (a[i]![1] !== b[i]![1]) return a[i]![1] < b[i]![1] ? -1 : 1;
  }
  return 0;
}

const BLOCK_BYTES = 1 << 20;

/** Reads rows of a file by position through one block, which serves rows read in file order. */
class RowReader {
  private block = Buffer.alloc(0);
  private blockStart = 0;

  constructor(private readonly handle: FileHandle) {}

  async read(offset: number, length: number): Promise<string> {
    const within = offset - this.blockStart;
    if (within < 0 || within + length > this.block.length) {
      const buf = Buffer.alloc(Math.max(length, BLOCK_BYTES));
      const { bytesRead } = await this.handle.read(buf, 0, buf.length, offset);
      this.block = buf.subarray(0, bytesRead);
      this.blockStart = offset;
    }
    const start = offset - this.blockStart;
    return this.block.toString('utf8', start, start + length);
  }
}

interface PlacedRow {
  offset: number;
  length: number;
  duplicates: number;
}

/** Each row's place in `scratch`, in 0.7.0's order, with how many records claim its identity. */
function* sortedRows(reducer: HealthReducer): Generator<PlacedRow> {
  const tasks = reducer.taskIndexes().sort((a, b) => compareParts([part(a)], [part(b)]));
  for (const taskIndex of tasks) {
    const identities = reducer
      .identitiesOf(taskIndex)
      .sort((a, b) =>
        compareParts([part(a.rolloutIndex), part(a.stageIndex)], [part(b.rolloutIndex), part(b.stageIndex)]),
      );
    for (const { rows, duplicates } of identities)
      for (let i = 0; i < rows.length; i += 2) yield { offset: rows[i]!, length: rows[i + 1]!, duplicates };
  }
}

/**
 * Whether the sorted rows are the scratch file as written: each unchanged and starting where the one
 * before it ended. A merged stage's rollouts come in key order without duplicates, so this is the
 * usual case, and the file is then renamed rather than copied row by row.
 */
function asWritten(rows: Iterable<PlacedRow>): boolean {
  let end = 0;
  for (const row of rows) {
    if (row.duplicates > 0 || row.offset !== end) return false;
    end += row.length;
  }
  return true;
}

/** The rows of `scratch` in 0.7.0's order as `file`, copied, or renamed where they already are; `scratch` is gone after. */
export async function writeVerdictRows(reducer: HealthReducer, scratch: string, file: string): Promise<void> {
  // Every row written is placed once, so rows that start where the last ended cover the whole file.
  // Placed twice rather than held, as a row's place is all that is kept per rollout.
  if (asWritten(sortedRows(reducer))) return renameDurably([[scratch, file]]);
  const input = await open(scratch, 'r');
  const reader = new RowReader(input);
  const out = await JsonlWriter.open(file);
  try {
    for (const { offset, length, duplicates } of sortedRows(reducer)) {
      const line = await reader.read(offset, length);
      await out.writeLine(duplicates > 0 ? withDuplicates(line, duplicates) : line);
    }
  } finally {
    await out.close();
    await input.close();
  }
  await syncFile(file);
  await rm(scratch, { force: true });
}
