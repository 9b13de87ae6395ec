import { open, rename, stat, type FileHandle } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { readJsonl, readLines } from '../gym/jsonl';
import { NOTHING_MERGED, type CollectStageInput, type MergeProgress, type MergeResult } from '../contracts/payloads';
import { writeAggregateMetrics } from './aggregateMetrics';
import { chunkRange, materializedInputsPath, mergedPaths, readMaterializedMeta, shardPath, type MaterializedMeta } from './chunkIndex';
import { readRowIndex } from './rowIndex';
import { parseShardLine, type ShardEntry } from './shardLines';

// Shards are written in completion order, which depends on timing; the merged files are written in
// materialized order so the same seed gives byte-identical artifacts whatever crashed when. The
// workflow merges chunks as the ones before them finish, so after the last chunk only a tail is left.

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

/**
 * Appends whole lines as read (shard lines are already our JSON, so re-serializing them would only
 * cost time) at an explicit position: a retried merge starts over at the size the last successful
 * one reported, so lines a failed attempt wrote are overwritten instead of repeated.
 */
class LineWriter {
  private lines: string[] = [];
  private constructor(
    private readonly handle: FileHandle,
    public position: number,
  ) {}

  static async openAt(file: string, position: number): Promise<LineWriter> {
    const handle = await open(file, position === 0 ? 'w' : 'r+');
    await handle.truncate(position);
    return new LineWriter(handle, position);
  }

  push(text: string): void {
    this.lines.push(text, '\n');
  }

  /** Called once per chunk, so memory holds one chunk's lines at most. */
  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const data = Buffer.from(this.lines.join(''), 'utf8');
    this.lines = [];
    await this.handle.write(data, 0, data.length, this.position);
    this.position += data.length;
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A finished chunk's rollouts by key. Only a chunk attempt that crashed leaves an unterminated line,
 * and its retry cuts it off, so one found here is dropped unless it is whole. */
async function readRolloutShard(file: string): Promise<Map<string, ShardEntry>> {
  const entries = new Map<string, ShardEntry>();
  try {
    for await (const line of readLines(file)) {
      if (line.text === '') continue;
      let entry: ShardEntry;
      try {
        entry = parseShardLine(line);
      } catch (err) {
        if (line.terminated) throw err;
        continue;
      }
      entries.set(`${entry.task}:${entry.rollout}`, entry);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return entries;
}

/** The keys of a chunk's rows in materialized order: from the row index, or from the rows themselves
 * for a materialization made before there was one. */
async function* chunkKeys(outPrefix: string, meta: MaterializedMeta, chunk: number): AsyncGenerator<string> {
  if (meta.agentNames) {
    for await (const row of readRowIndex(outPrefix, meta.agentNames, chunk * meta.chunkSize, (chunk + 1) * meta.chunkSize)) yield `${row.task}:${row.rollout}`;
    return;
  }
  for await (const { value } of readJsonl(materializedInputsPath(outPrefix), await chunkRange(outPrefix, chunk, meta.chunkSize))) yield key(value as Keyed);
}

/** Appends chunks [from.chunks, to) to the partial merged files, in materialized order. */
async function appendChunks(outPrefix: string, meta: MaterializedMeta, from: MergeProgress, to: number): Promise<MergeProgress> {
  const { rolloutsPath, failuresPath, digestsPath } = mergedPaths(outPrefix);
  // A partial file shorter than the progress says (removed, not on this host's disk, or merged before
  // there were digests) is rebuilt from chunk 0.
  const atLeast = async (file: string, bytes: number | undefined) => bytes !== undefined && ((await sizeOf(file)) ?? -1) >= bytes;
  const intact =
    from.chunks > 0 &&
    (await atLeast(`${rolloutsPath}.tmp`, from.rolloutsBytes)) &&
    (await atLeast(`${failuresPath}.tmp`, from.failuresBytes)) &&
    (await atLeast(`${digestsPath}.tmp`, from.digestsBytes));
  const start = intact ? from : NOTHING_MERGED;
  const rollouts = await LineWriter.openAt(`${rolloutsPath}.tmp`, start.rolloutsBytes);
  const failures = await LineWriter.openAt(`${failuresPath}.tmp`, start.failuresBytes);
  const digests = await LineWriter.openAt(`${digestsPath}.tmp`, start.digestsBytes ?? 0);
  let { completed, failedKeys } = start;
  try {
    for (let chunk = start.chunks; chunk < to; chunk++) {
      const results = await readRolloutShard(shardPath(outPrefix, chunk, 'rollouts'));
      const failuresByKey = new Map<string, Array<{ value: Keyed; text: string }>>();
      for (const f of await readAll(shardPath(outPrefix, chunk, 'failures'))) {
        failuresByKey.set(key(f.value), [...(failuresByKey.get(key(f.value)) ?? []), f]);
      }
      for await (const k of chunkKeys(outPrefix, meta, chunk)) {
        const result = results.get(k);
        if (result !== undefined) {
          rollouts.push(result.line);
          digests.push(result.digest);
          completed++;
        } else if (failuresByKey.has(k)) {
          failedKeys++;
        }
        const attempts = (failuresByKey.get(k) ?? []).sort((a, b) => (a.value.attempt ?? 0) - (b.value.attempt ?? 0));
        for (const f of attempts) failures.push(f.text);
      }
      await rollouts.flush();
      await failures.flush();
      await digests.flush();
      heartbeat({ chunk });
    }
  } finally {
    await rollouts.close();
    await failures.close();
    await digests.close();
  }
  return { chunks: to, rolloutsBytes: rollouts.position, failuresBytes: failures.position, digestsBytes: digests.position, completed, failedKeys };
}

async function finishedMeta(outPrefix: string): Promise<MaterializedMeta> {
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  return meta;
}

/** Merges chunks [from.chunks, to) while later chunks still run; every chunk below `to` has finished. */
export async function mergeChunks(input: { outPrefix: string; from: MergeProgress; to: number }): Promise<MergeProgress> {
  return appendChunks(input.outPrefix, await finishedMeta(input.outPrefix), input.from, input.to);
}

/** Merges the chunks not merged yet and puts the merged files in place; every chunk has finished. */
export async function finishMerge(input: { outPrefix: string; from?: MergeProgress }): Promise<MergeResult> {
  const meta = await finishedMeta(input.outPrefix);
  const { completed, failedKeys } = await appendChunks(input.outPrefix, meta, input.from ?? NOTHING_MERGED, meta.chunks);
  const { rolloutsPath, failuresPath, digestsPath } = mergedPaths(input.outPrefix);
  await rename(`${rolloutsPath}.tmp`, rolloutsPath);
  await rename(`${failuresPath}.tmp`, failuresPath);
  await rename(`${digestsPath}.tmp`, digestsPath);
  return { rolloutsPath, failuresPath, completed, failedKeys };
}

/**
 * Merges every shard, then writes the aggregate metrics NeMo Gym writes once rollouts are collected.
 * The activity stage workflows scheduled before merging moved into the chunk phase still call.
 */
export async function mergeShards(input: Pick<CollectStageInput, 'plan' | 'stage' | 'outPrefix'>): Promise<MergeResult> {
  const merged = await finishMerge({ outPrefix: input.outPrefix });
  await writeAggregateMetrics({ plan: input.plan, stage: input.stage, rolloutsPath: merged.rolloutsPath });
  return merged;
}
