import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endpointLimiter, nextChunkRank } from '../../../activities/http/endpointLimiter';

// The per-endpoint cap serves waiting requests oldest chunk first: a chunk that started earlier
// holds the cap, and those after it fill it as it ends, so chunks finish one by one.

/** A task that stays in flight until `release` is called, recording when it started. */
function heldTask(name: string, started: string[]) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => {
      started.push(name);
      await released;
      return name;
    },
    release: () => release(),
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('waiting requests are served by rank, and in arrival order within a rank', async () => {
  const limiter = endpointLimiter('http://rank-order.invalid/run', 1);
  const started: string[] = [];
  const first = heldTask('first', started);
  const running = [limiter.run(first.task, 5)];
  const queued: Array<[string, number]> = [
    ['late-3', 3],
    ['early-1a', 1],
    ['mid-2', 2],
    ['early-1b', 1],
    ['late-3b', 3],
  ];
  for (const [name, rank] of queued) running.push(limiter.run(async () => (started.push(name), name), rank));
  await settle();
  assert.deepEqual(started, ['first']);
  first.release();
  assert.deepEqual(await Promise.all(running), ['first', 'late-3', 'early-1a', 'mid-2', 'early-1b', 'late-3b']);
  assert.deepEqual(started, ['first', 'early-1a', 'early-1b', 'mid-2', 'late-3', 'late-3b']);
});

test('the cap holds while ranks reorder the queue, and a raised cap wakes waiters in rank order', async () => {
  const url = 'http://rank-cap.invalid/run';
  const limiter = endpointLimiter(url, 2);
  const started: string[] = [];
  let inFlight = 0;
  let peak = 0;
  const tasks = Array.from({ length: 8 }, (_, i) => heldTask(`t${i}`, started));
  const running = tasks.map((t, i) =>
    limiter.run(async () => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await t.task();
      } finally {
        inFlight--;
      }
    }, 8 - i),
  );
  await settle();
  assert.deepEqual(started, ['t0', 't1']);
  endpointLimiter(url, 4);
  await settle();
  assert.deepEqual(started, ['t0', 't1', 't7', 't6']);
  for (const t of tasks) t.release();
  await Promise.all(running);
  assert.equal(peak, 4);
  assert.deepEqual(started.slice(4), ['t5', 't4', 't3', 't2']);
});

test('chunk ranks rise with every chunk started', () => {
  const a = nextChunkRank();
  const b = nextChunkRank();
  assert.ok(b > a);
});
