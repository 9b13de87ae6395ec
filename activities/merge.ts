import { appendFile, open, rename, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { readJsonl, readLines } from '../gym/jsonl';
import { syncFiles } from '../gym/durable';
import { NOTHING_MERGED, type CollectStageInput, type MergeProgress, type MergeResult } from '../contracts/payloads';
import { writeAggregateMetrics } from './aggregateMetrics';
import {
  chunkRange,
  materializedInputsPath,
  mergedPaths,
  readMaterializedMeta,
  type MaterializedMeta,
} from './chunkIndex';
import { compareTokens, stageFence, type Fence } from './fence';
import { chunkShard } from './fenceShards';
import { readRowIndex } from './rowIndex';
import { parseShardLine, type ShardEntry } from './shardLines';

// Shards are written in completion order, which depends on timing; the merged files are written in
// materialized order so the same seed gives byte-identical artifacts whatever crashed when. The
// workflow merges chunks as the ones before them finish, so after the last chunk only a tail is left.
// The partial files belong to one merge attempt at a time and are published by renaming them
// (docs/fencing.md), so an attempt Temporal gave up on cannot write into its successor's files.

interface Keyed {
  _ng_task_index: number;
  _ng_rollout_index: number;
  attempt?: number;
}
const key = (v: Keyed) => `${v._ng_task_index}:${v._ng_rollout_index}`;

async function readAll(file: string): Promise<Array<{ value: Keyed; text: string }>> {
  const out: Array<{ value: Keyed; text: string }> = [];
  try {
    for await (const { value, text } of readJsonl(file, { allowTornTail: true }))
      out.push({ value: value as Keyed, text: text ?? JSON.stringify(value) });
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
    for await (const row of readRowIndex(
      outPrefix,
      meta.agentNames,
      chunk * meta.chunkSize,
      (chunk + 1) * meta.chunkSize,
    ))
      yield `${row.task}:${row.rollout}`;
    return;
  }
  for await (const { value } of readJsonl(
    materializedInputsPath(outPrefix),
    await chunkRange(outPrefix, chunk, meta.chunkSize),
  ))
    yield key(value as Keyed);
}

/** A merge attempt's partial merged files, in the stage's fence directory. */
export interface PartialFiles {
  rollouts: string;
  failures: string;
  digests: string;
}

function partialFiles(fence: Fence, name = fence.token.name): PartialFiles {
  const at = (kind: string) => path.join(fence.dir, `${name}.${kind}.jsonl`);
  return { rollouts: at('rollouts'), failures: at('failures'), digests: at('digests') };
}

async function renameAll(from: PartialFiles, to: PartialFiles): Promise<void> {
  try {
    await rename(from.rollouts, to.rollouts);
    await rename(from.failures, to.failures);
    await rename(from.digests, to.digests);
  } catch (err) {
    // Another attempt took them first: this one rebuilds from chunk 0 (the sizes will not match).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * The partial files this attempt appends to: its own when it ran before, else those of the newest
 * merge scheduled before this one's activity (the one whose progress the workflow passed on), taken
 * by renaming them, so exactly one attempt continues them; older attempts' files are removed.
 */
async function takePartialFiles(fence: Fence): Promise<PartialFiles> {
  await fence.check();
  await fence.claim();
  const own = partialFiles(fence);
  if ((await sizeOf(own.rollouts)) === undefined) {
    const earlier = (await fence.entries())
      .filter(({ token }) => token.scheduledMs < fence.token.scheduledMs)
      .sort((a, b) => compareTokens(b.token, a.token));
    const source = earlier.find(({ entry }) => entry.endsWith('.rollouts.jsonl'));
    if (source) await renameAll(partialFiles(fence, source.token.name), own);
  }
  const files = [own.rollouts, own.failures, own.digests];
  for (const file of files) await appendFile(file, '');
  await fence.checkClaimed([...files, fence.claimFile]);
  await fence.removeOlder();
  return own;
}

/** Appends chunks [from.chunks, to) to this attempt's partial merged files, in materialized order. */
async function appendChunks(
  outPrefix: string,
  meta: MaterializedMeta,
  from: MergeProgress,
  to: number,
  fence: Fence,
): Promise<MergeProgress & { files: PartialFiles }> {
  const files = await takePartialFiles(fence);
  // A partial file shorter than the progress says (removed, taken by another attempt, not on this
  // host's disk, or merged before there were digests) is rebuilt from chunk 0.
  const atLeast = async (file: string, bytes: number | undefined) =>
    bytes !== undefined && ((await sizeOf(file)) ?? -1) >= bytes;
  const intact =
    from.chunks > 0 &&
    (await atLeast(files.rollouts, from.rolloutsBytes)) &&
    (await atLeast(files.failures, from.failuresBytes)) &&
    (await atLeast(files.digests, from.digestsBytes));
  const start = intact ? from : NOTHING_MERGED;
  const rollouts = await LineWriter.openAt(files.rollouts, start.rolloutsBytes);
  const failures = await LineWriter.openAt(files.failures, start.failuresBytes);
  const digests = await LineWriter.openAt(files.digests, start.digestsBytes ?? 0);
  let { completed, failedKeys } = start;
  try {
    for (let chunk = start.chunks; chunk < to; chunk++) {
      const shard = await chunkShard(outPrefix, chunk);
      const results = await readRolloutShard(shard.rollouts);
      const failuresByKey = new Map<string, Array<{ value: Keyed; text: string }>>();
      for (const f of await readAll(shard.failures)) {
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
      await fence.check();
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
  // The progress returned is what the next merge continues from, so it must survive a power cut.
  await syncFiles(Object.values(files));
  return {
    chunks: to,
    rolloutsBytes: rollouts.position,
    failuresBytes: failures.position,
    digestsBytes: digests.position,
    completed,
    failedKeys,
    files,
  };
}

async function finishedMeta(outPrefix: string): Promise<MaterializedMeta> {
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  return meta;
}

/** Merges chunks [from.chunks, to) while later chunks still run; every chunk below `to` has finished. */
export async function mergeChunks(input: {
  outPrefix: string;
  from: MergeProgress;
  to: number;
}): Promise<MergeProgress> {
  const { files: _files, ...progress } = await appendChunks(
    input.outPrefix,
    await finishedMeta(input.outPrefix),
    input.from,
    input.to,
    stageFence(input.outPrefix),
  );
  return progress;
}

/** Merges the chunks not merged yet into this attempt's partial files, which are then whole but not published. */
export async function mergeRest(
  outPrefix: string,
  from: MergeProgress | undefined,
  fence: Fence,
): Promise<{ files: PartialFiles; completed: number; failedKeys: number }> {
  const meta = await finishedMeta(outPrefix);
  const { files, completed, failedKeys } = await appendChunks(
    outPrefix,
    meta,
    from ?? NOTHING_MERGED,
    meta.chunks,
    fence,
  );
  return { files, completed, failedKeys };
}

/** Where the merged files are published, from this attempt's partial files. */
export function mergedMoves(outPrefix: string, files: PartialFiles): Array<[string, string]> {
  const { rolloutsPath, failuresPath, digestsPath } = mergedPaths(outPrefix);
  return [
    [files.rollouts, rolloutsPath],
    [files.failures, failuresPath],
    [files.digests, digestsPath],
  ];
}

/** Merges the chunks not merged yet and puts the merged files in place; every chunk has finished. */
export async function finishMerge(
  input: { outPrefix: string; from?: MergeProgress },
  fence: Fence = stageFence(input.outPrefix),
): Promise<MergeResult> {
  const { files, completed, failedKeys } = await mergeRest(input.outPrefix, input.from, fence);
  await fence.publish(mergedMoves(input.outPrefix, files));
  const { rolloutsPath, failuresPath } = mergedPaths(input.outPrefix);
  return { rolloutsPath, failuresPath, completed, failedKeys };
}

/**
 * Merges every shard, then writes the aggregate metrics NeMo Gym writes once rollouts are collected.
 * The activity stage workflows scheduled before merging moved into the chunk phase still call.
 */
export async function mergeShards(
  input: Pick<CollectStageInput, 'plan' | 'stage' | 'outPrefix'>,
): Promise<MergeResult> {
  const fence = stageFence(input.outPrefix);
  const merged = await finishMerge({ outPrefix: input.outPrefix }, fence);
  await writeAggregateMetrics({ plan: input.plan, stage: input.stage, rolloutsPath: merged.rolloutsPath }, fence);
  return merged;
}
