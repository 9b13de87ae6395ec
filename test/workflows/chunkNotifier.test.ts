import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkNotifier } from '../../workflows/chunkNotifier';

// Collect tells early profiling only prefixes of finished chunks, one signal in flight at a time,
// each carrying the newest prefix, and a last one saying every chunk has finished.

function recorder() {
  const sent: Array<[number, boolean]> = [];
  let release: Array<() => void> = [];
  const send = async (chunks: number, final: boolean): Promise<void> => {
    sent.push([chunks, final]);
    await new Promise<void>((resolve) => release.push(resolve));
  };
  const releaseAll = async () => {
    const waiting = release;
    release = [];
    waiting.forEach((r) => r());
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { sent, send, releaseAll };
}

test('only finished prefixes are sent, one signal at a time, the newest when it goes', async () => {
  const r = recorder();
  const notifier = new ChunkNotifier(0, r.send);
  notifier.chunkFinished(1);
  assert.deepEqual(r.sent, [], 'chunk 0 has not finished: no prefix grew');
  notifier.chunkFinished(0);
  assert.deepEqual(r.sent, [[2, false]]);
  notifier.chunkFinished(2);
  notifier.chunkFinished(3);
  assert.deepEqual(r.sent, [[2, false]], 'a signal is in flight: the next waits');
  await r.releaseAll();
  assert.deepEqual(r.sent, [
    [2, false],
    [4, false],
  ]);
  await r.releaseAll();
  const finishing = notifier.finish(5);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(r.sent.at(-1), [5, true]);
  await r.releaseAll();
  await finishing;
});

test('a continued-as-new collect starts from the chunks its earlier runs finished', async () => {
  const r = recorder();
  const notifier = new ChunkNotifier(6, r.send);
  notifier.chunkFinished(6);
  assert.deepEqual(r.sent, [[7, false]]);
  await r.releaseAll();
  await notifier.drain();
});
