import { open, rename, type FileHandle } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { readJsonl } from '../gym/jsonl';
import type { CollectStageInput, MergeResult } from '../contracts/payloads';
import { writeAggregateMetrics } from './aggregateMetrics';
import { chunkRange, materializedInputsPath, readMaterializedMeta, shardPath } from './chunkIndex';

// Shards are written in completion order, which depends on timing; the merged files are written in
// materialized order so the same seed gives byte-identical artifacts whatever crashed when.

interface Keyed {
  _ng_task_index: number;
  _ng_rollout_index: number;
  attempt?: number;
}
const key = (v: Keyed) => `${v._ng_task_index}:${v._ng_rollout_index}`;

async function readAll(file: string): Promise<Array<{ value: Keyed; text: string }>> {
  const out: Array<{ value: Keyed; text: string }> = [];
  try {
    for await (const { value, text } of readJsonl(file, { allowTornTail: true })) out.push({ value: value as Keyed, text: text ?? JSON.stringify(value) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return out;
}

/** Appends whole lines as read: shard lines are already our JSON, so re-serializing them would only cost time. */
class LineWriter {
  private lines: string[] = [];
  private constructor(private readonly handle: FileHandle) {}

  static async open(file: string): Promise<LineWriter> {
    return new LineWriter(await open(file, 'w'));
  }

  push(text: string): void {
    this.lines.push(text, '\n');
  }

  /** Called once per chunk, so memory holds one chunk's lines at most. */
  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const data = this.lines.join('');
    this.lines = [];
    await this.handle.writeFile(data, 'utf8');
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }
}

/** Merges the shards, then writes the aggregate metrics NeMo Gym writes once rollouts are collected. */
export async function mergeShards(input: Pick<CollectStageInput, 'plan' | 'stage' | 'outPrefix'>): Promise<MergeResult> {
  const { outPrefix } = input;
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  const rolloutsPath = `${outPrefix}.jsonl`;
  const failuresPath = `${outPrefix}_failures.jsonl`;
  const rollouts = await LineWriter.open(`${rolloutsPath}.tmp`);
  const failures = await LineWriter.open(`${failuresPath}.tmp`);
  let completed = 0;
  let failedKeys = 0;
  try {
    for (let chunk = 0; chunk < meta.chunks; chunk++) {
      const results = new Map((await readAll(shardPath(outPrefix, chunk, 'rollouts'))).map((r) => [key(r.value), r.text]));
      const failuresByKey = new Map<string, Array<{ value: Keyed; text: string }>>();
      for (const f of await readAll(shardPath(outPrefix, chunk, 'failures'))) {
        failuresByKey.set(key(f.value), [...(failuresByKey.get(key(f.value)) ?? []), f]);
      }
      const range = await chunkRange(outPrefix, chunk, meta.chunkSize);
      for await (const { value } of readJsonl(materializedInputsPath(outPrefix), { ...range })) {
        const k = key(value as Keyed);
        const result = results.get(k);
        if (result !== undefined) {
          rollouts.push(result);
          completed++;
        } else if (failuresByKey.has(k)) {
          failedKeys++;
        }
        const attempts = (failuresByKey.get(k) ?? []).sort((a, b) => (a.value.attempt ?? 0) - (b.value.attempt ?? 0));
        for (const f of attempts) failures.push(f.text);
      }
      await rollouts.flush();
      await failures.flush();
      heartbeat({ chunk });
    }
  } finally {
    await rollouts.close();
    await failures.close();
  }
  await rename(`${rolloutsPath}.tmp`, rolloutsPath);
  await rename(`${failuresPath}.tmp`, failuresPath);
  await writeAggregateMetrics({ plan: input.plan, stage: input.stage, rolloutsPath });
  return { rolloutsPath, failuresPath, completed, failedKeys };
}
