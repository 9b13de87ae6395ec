import { readFileSync } from 'node:fs';
import path from 'node:path';
import { JsonlWriter } from '../../gym/jsonl';

// Bench inputs are the demo rows (or a run's pivot candidates) repeated with a `bench_id`, because
// materialization folds identical lines into one task and a bench needs many distinct tasks.

export const DEMO_TASKS = path.resolve(__dirname, '../../configs/demo_tasks.jsonl');

function readRows(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Writes `count` distinct rows cycling through the rows of `source`; returns `count`. */
export async function writeDistinctRows(source: string, out: string, count: number): Promise<number> {
  const rows = readRows(source);
  if (rows.length === 0) throw new Error(`${source}: no rows to repeat`);
  const writer = await JsonlWriter.open(out);
  try {
    for (let i = 0; i < count; i++) await writer.write({ ...rows[i % rows.length], bench_id: i });
  } finally {
    await writer.close();
  }
  return count;
}
