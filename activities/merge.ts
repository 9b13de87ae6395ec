import { rename } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { JsonlWriter, readJsonl } from '../gym/jsonl';
import type { MergeResult } from '../workflows/types';
import { chunkRange, materializedInputsPath, readMaterializedMeta, shardPath } from './chunkIndex';

// Shards are written in completion order, which depends on timing; the merged files are written in
// materialized order so the same seed gives byte-identical artifacts whatever crashed when.

interface Keyed {
  _ng_task_index: number;
  _ng_rollout_index: number;
  attempt?: number;
}
const key = (v: Keyed) => `${v._ng_task_index}:${v._ng_rollout_index}`;

async function readAll(file: string): Promise<Keyed[]> {
  const out: Keyed[] = [];
  try {
    for await (const { value } of readJsonl(file, { allowTornTail: true })) out.push(value as Keyed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return out;
}

export async function mergeShards(input: { outPrefix: string }): Promise<MergeResult> {
  const { outPrefix } = input;
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  const rolloutsPath = `${outPrefix}.jsonl`;
  const failuresPath = `${outPrefix}_failures.jsonl`;
  const rollouts = await JsonlWriter.open(`${rolloutsPath}.tmp`);
  const failures = await JsonlWriter.open(`${failuresPath}.tmp`);
  let completed = 0;
  let failedKeys = 0;
  try {
    for (let chunk = 0; chunk < meta.chunks; chunk++) {
      const results = new Map((await readAll(shardPath(outPrefix, chunk, 'rollouts'))).map((r) => [key(r), r]));
      const failureLines = await readAll(shardPath(outPrefix, chunk, 'failures'));
      const failuresByKey = new Map<string, Keyed[]>();
      for (const f of failureLines) failuresByKey.set(key(f), [...(failuresByKey.get(key(f)) ?? []), f]);
      const range = await chunkRange(outPrefix, chunk, meta.chunkSize);
      for await (const { value } of readJsonl(materializedInputsPath(outPrefix), { ...range })) {
        const k = key(value as Keyed);
        const result = results.get(k);
        if (result) {
          await rollouts.write(result);
          completed++;
        } else if (failuresByKey.has(k)) {
          failedKeys++;
        }
        for (const f of (failuresByKey.get(k) ?? []).sort((a, b) => (a.attempt ?? 0) - (b.attempt ?? 0))) await failures.write(f);
      }
      heartbeat({ chunk });
    }
  } finally {
    await rollouts.close();
    await failures.close();
  }
  await rename(`${rolloutsPath}.tmp`, rolloutsPath);
  await rename(`${failuresPath}.tmp`, failuresPath);
  return { rolloutsPath, failuresPath, completed, failedKeys };
}
