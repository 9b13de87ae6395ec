import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NOTHING_MERGED, type MergeProgress } from '../../contracts/payloads';
import { MergeFrontier } from '../../workflows/mergeFrontier';

// The frontier's contract: merges cover consecutive chunk ranges from the merged ones on, one at a
// time, never a chunk that has not finished, and none once held.

function recorder() {
  const calls: Array<[number, number]> = [];
  let release: Array<() => void> = [];
  const merge = async (from: MergeProgress, to: number): Promise<MergeProgress> => {
    calls.push([from.chunks, to]);
    await new Promise<void>((resolve) => release.push(resolve));
    return { ...from, chunks: to, completed: from.completed + (to - from.chunks) };
  };
  const releaseAll = async () => {
    const waiting = release;
    release = [];
    waiting.forEach((r) => r());
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { calls, merge, releaseAll, running: () => release.length };
}

test('chunks finishing out of order are merged in order, one merge at a time', async () => {
  const r = recorder();
  const frontier = new MergeFrontier(NOTHING_MERGED, 0, r.merge);
  frontier.chunkFinished(1);
  assert.deepEqual(r.calls, [], 'chunk 0 has not finished, so nothing can be merged');
  assert.equal(frontier.pending, undefined);
  frontier.chunkFinished(0);
  assert.deepEqual(r.calls, [[0, 2]]);
  frontier.chunkFinished(2);
  frontier.chunkFinished(3);
  assert.equal(r.running(), 1, 'a second merge waits for the first');
  await r.releaseAll();
  assert.deepEqual(r.calls, [
    [0, 2],
    [2, 4],
  ]);
  const drained = frontier.drain();
  await r.releaseAll();
  assert.deepEqual(await drained, { ...NOTHING_MERGED, chunks: 4, completed: 4 });
  assert.equal(frontier.pending, undefined);
});

test('held, it lets the merge in flight finish and starts no other: the rest is left to the next run or the tail', async () => {
  const r = recorder();
  const frontier = new MergeFrontier(NOTHING_MERGED, 0, r.merge);
  frontier.chunkFinished(0);
  frontier.hold();
  frontier.chunkFinished(1);
  const drained = frontier.drain();
  await r.releaseAll();
  assert.deepEqual(await drained, { ...NOTHING_MERGED, chunks: 1, completed: 1 });
  assert.deepEqual(r.calls, [[0, 1]]);
});

test('a continued-as-new run merges what the earlier run finished but had not merged', async () => {
  const r = recorder();
  const carried = { ...NOTHING_MERGED, chunks: 3, completed: 3 };
  const frontier = new MergeFrontier(carried, 5, r.merge);
  assert.deepEqual(r.calls, [[3, 5]]);
  const drained = frontier.drain();
  await r.releaseAll();
  assert.equal((await drained).chunks, 5);
});

test('a failed merge rejects pending, so the workflow waiting on it fails', async () => {
  const frontier = new MergeFrontier(NOTHING_MERGED, 0, () => Promise.reject(new Error('disk full')));
  frontier.chunkFinished(0);
  await assert.rejects(frontier.pending!, /disk full/);
});
