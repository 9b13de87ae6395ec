import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { mergeChunks } from '../../../activities/stage/merge';
import { NOTHING_MERGED, type MergeProgress } from '../../../contracts/payloads';
import { materialize, outPrefixOf } from '../fakeGym';
import {
  TASKS,
  type Row,
  assertChangedNothing,
  attempt,
  chunk,
  finish,
  snapshot,
  stage,
  startAgent,
  undisturbed,
  until,
} from './fenceSetup';

// A partitioned worker is not dead (docs/fencing.md): an attempt Temporal gave up on may wake up and
// carry on after its successor finished. Here the older attempt of a chunk, of a finish and of a merge
// carries on (or starts) after the newer one finished and the stage was published, in-process: the
// published bytes must be those of an undisturbed run, and nothing in the run directory may change
// after the successor finished. Each test fails on the code before fencing.

test('a chunk attempt that carries on after its successor finished changes nothing its successor wrote or the run published', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 3);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  assert.equal(chunks, 2);
  await chunk(steady, 0, attempt(1000, 1));

  // Attempt 1 of chunk 1 gets three answers, then its worker is cut off from Temporal but not from the disk.
  const first = chunk(stalled, 1, attempt(1001, 1));
  first.catch(() => undefined);
  await until(() => stalling.held >= 1, 'the first attempt waits on the agent');
  await sleep(50);
  // Temporal retries the chunk elsewhere; it finishes, and the stage is merged and published.
  const second = await chunk(steady, 1, attempt(1001, 2));
  assert.equal(second.alreadyDone + second.completed, 6);
  assert.ok(second.alreadyDone >= 3, `the successor kept the first attempt's whole lines (${second.alreadyDone})`);
  await finish(steady, attempt(5000, 1));
  const settled = snapshot(steady.runDir);

  // The cut-off attempt wakes up with answers for the rows it held.
  stalling.release();
  // Longer than a heartbeat, so a look at the fence and any write after it would have happened.
  await assertChangedNothing(steady, first, settled, expected, 1500);

  // The shard says which attempt it took over, and what it kept.
  const sidecars = Object.keys(settled).filter((f) => f.endsWith('_superseded.jsonl'));
  assert.equal(sidecars.length, 1, `one sidecar: ${Object.keys(settled).join(' ')}`);
  const [record] = readFileSync(path.join(steady.runDir, sidecars[0]!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  assert.match(record!.attempt, /^\d+-1001-1-\w+$/);
  assert.match(record!.superseded_by, /^\d+-1001-2-\w+$/);
  assert.equal(record!.rollout_lines_kept, second.alreadyDone);
});

test('a chunk attempt that starts after its successor finished creates nothing', async () => {
  const expected = await undisturbed();
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 2));
  await finish(steady, attempt(5000, 1));
  const settled = snapshot(steady.runDir);
  // Attempt 1 of chunk 1, delivered to a worker before its partition and run after it healed.
  await assertChangedNothing(steady, chunk(steady, 1, attempt(1001, 1)), settled, expected, 0);
});

test('a finish attempt that carries on after its successor finished publishes nothing', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 0);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));

  // Attempt 1 of the finish merges and profiles, then waits on /aggregate_metrics: cut off there.
  const first = finish(stalled, attempt(5000, 1));
  first.catch(() => undefined);
  await until(() => stalling.held >= 1, 'the first finish waits on the agent');
  const second = await finish(steady, attempt(5000, 2));
  assert.equal(second.merge.completed, TASKS.length * 2);
  const settled = snapshot(steady.runDir);

  stalling.release();
  await assertChangedNothing(steady, first, settled, expected, 200);
});

test('a merge attempt that starts after the stage was published touches nothing', async () => {
  const expected = await undisturbed();
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));
  const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
  // Attempt 2 of the merge of chunk 0 ran while attempt 1 was stuck before its first write.
  const merged = (await attempt(3000, 2).run(mergeChunks, mergeInput)) as MergeProgress;
  await finish(steady, attempt(5000, 1), merged);
  const settled = snapshot(steady.runDir);

  await assertChangedNothing(steady, attempt(3000, 1).run(mergeChunks, mergeInput), settled, expected, 0);
});
