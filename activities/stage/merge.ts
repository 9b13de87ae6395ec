import type { FileHandle } from 'node:fs/promises';
import { Context, heartbeat } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { readJsonl } from '../../gym/jsonl';
import { syncDir } from '../../gym/durable';
import { NOTHING_MERGED, type MergeProgress } from '../../contracts/payloads';
import { chunkRange, materializedInputsPath, readMaterializedMeta, type MaterializedMeta } from '../chunk/chunkIndex';
import { claimStageFence, type Fence } from '../chunk/fence';
import { chunkShard } from '../chunk/fenceShards';
import { readRowIndex } from './rowIndex';
import { readShardEntries, type ShardBytes } from '../chunk/shardLines';
import { pauseAt } from '../run/testHooks';
import { LineWriter, takePartialFiles, type PartialFiles } from './partialFiles';

// Shards are written in completion order, which depends on timing; the merged files are written in
// materialized order so the same seed gives byte-identical artifacts whatever crashed when. The
// workflow merges chunks as the ones before them finish, so after the last chunk only a tail is left.
// The partial files belong to one merge attempt at a time and are published by renaming them
// (partialFiles.ts, docs/fencing.md), so an attempt Temporal gave up on cannot write into its
// successor's files.

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

/** A finished chunk's rollouts by key (readShardEntries: a torn last line is dropped unless whole). */
async function readRolloutShard(file: string): Promise<Map<string, ShardBytes>> {
  const entries = new Map<string, ShardBytes>();
  for (const entry of await readShardEntries(file)) entries.set(`${entry.task}:${entry.rollout}`, entry);
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

/**
 * The rollout lines of materialized rows [from, to) that completed, in materialized order, read
 * from their finished chunks' shards as a merge reads them, while later chunks still run.
 */
export async function* finishedRollouts(
  outPrefix: string,
  meta: MaterializedMeta,
  from: number,
  to: number,
): AsyncGenerator<string> {
  for (let chunk = Math.floor(from / meta.chunkSize); chunk * meta.chunkSize < to; chunk++) {
    const results = await readRolloutShard((await chunkShard(outPrefix, chunk)).rollouts);
    let row = chunk * meta.chunkSize;
    for await (const k of chunkKeys(outPrefix, meta, chunk)) {
      const result = row >= from && row < to ? results.get(k) : undefined;
      if (result !== undefined) yield result.line.toString('utf8');
      row++;
    }
  }
}

/** Cancellation reaches a merge at each chunk: it stops there, writing nothing more. */
function throwIfCancelled(): void {
  let signal: AbortSignal | undefined;
  try {
    signal = Context.current().cancellationSignal;
  } catch {
    return;
  }
  if (signal.aborted) throw new CancelledFailure(`merge cancelled: ${String(signal.reason)}`);
}

/** The merged lines of one chunk, in materialized order. */
async function chunkLines(
  outPrefix: string,
  meta: MaterializedMeta,
  chunk: number,
  out: { rollouts: LineWriter; failures: LineWriter; digests: LineWriter },
): Promise<{ completed: number; failedKeys: number }> {
  const shard = await chunkShard(outPrefix, chunk);
  const results = await readRolloutShard(shard.rollouts);
  const failuresByKey = new Map<string, Array<{ value: Keyed; text: string }>>();
  for (const f of await readAll(shard.failures)) {
    failuresByKey.set(key(f.value), [...(failuresByKey.get(key(f.value)) ?? []), f]);
  }
  let completed = 0;
  let failedKeys = 0;
  for await (const k of chunkKeys(outPrefix, meta, chunk)) {
    const result = results.get(k);
    if (result !== undefined) {
      out.rollouts.pushBytes(result.line);
      out.digests.pushBytes(result.digest);
      completed++;
    } else if (failuresByKey.has(k)) {
      failedKeys++;
    }
    const attempts = (failuresByKey.get(k) ?? []).sort((a, b) => (a.value.attempt ?? 0) - (b.value.attempt ?? 0));
    for (const f of attempts) out.failures.push(f.text);
  }
  return { completed, failedKeys };
}

/**
 * Appends chunks [from.chunks, to) to this attempt's partial merged files, in materialized order.
 * Each chunk's lines are written only after a look at the fence and at cancellation; a merge that
 * stops writes nothing more (no flush on the way out).
 */
async function appendChunks(
  outPrefix: string,
  meta: MaterializedMeta,
  from: MergeProgress,
  to: number,
  fence: Fence,
): Promise<MergeProgress & { files: PartialFiles }> {
  const { files, handles } = await takePartialFiles(fence, from);
  try {
    // A partial file shorter than the progress says (removed, not on this host's disk, or merged
    // before there were digests) is rebuilt from chunk 0.
    const atLeast = async (handle: FileHandle, bytes: number | undefined) =>
      bytes !== undefined && (await handle.stat()).size >= bytes;
    const intact =
      from.chunks > 0 &&
      (await atLeast(handles.rollouts, from.rolloutsBytes)) &&
      (await atLeast(handles.failures, from.failuresBytes)) &&
      (await atLeast(handles.digests, from.digestsBytes));
    const start = intact ? from : NOTHING_MERGED;
    const out = {
      rollouts: await LineWriter.at(files.rollouts, handles.rollouts, start.rolloutsBytes),
      failures: await LineWriter.at(files.failures, handles.failures, start.failuresBytes),
      digests: await LineWriter.at(files.digests, handles.digests, start.digestsBytes ?? 0),
    };
    let { completed, failedKeys } = start;
    for (let chunk = start.chunks; chunk < to; chunk++) {
      const merged = await chunkLines(outPrefix, meta, chunk, out);
      completed += merged.completed;
      failedKeys += merged.failedKeys;
      throwIfCancelled();
      await fence.check();
      await pauseAt('merge.checked', fence.token.name);
      for (const writer of Object.values(out)) await writer.flush();
      heartbeat({ chunk });
    }
    // The progress returned is what the next merge continues from, so it must survive a power cut.
    for (const writer of Object.values(out)) await writer.sync();
    await syncDir(fence.dir);
    return {
      chunks: to,
      rolloutsBytes: out.rollouts.position,
      failuresBytes: out.failures.position,
      digestsBytes: out.digests.position,
      completed,
      failedKeys,
      partial: fence.token.name,
      files,
    };
  } catch (err) {
    throw await fence.explain(err);
  } finally {
    for (const handle of Object.values(handles)) await handle.close();
  }
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
    await claimStageFence(input.outPrefix),
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
