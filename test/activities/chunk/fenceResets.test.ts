import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeChunks } from '../../../activities/stage/merge';
import { NOTHING_MERGED, type MergeProgress } from '../../../contracts/payloads';
import { stallFirstAt } from '../../helpers/stallFirst';
import { materialize, outPrefixOf } from '../fakeGym';
import {
  assertChangedNothing,
  attemptOf,
  chunk,
  finish,
  snapshot,
  stage,
  startAgent,
  undisturbed,
  until,
} from './fenceSetup';

// After an operator's reset (of an activity or of the workflow) or a resume after a cancel, the old
// run's attempt may still write: the stage publishes an undisturbed run's bytes all the same.

test('a chunk an operator resets at attempt 3 (attempt 1 again, scheduled now) completes and the stage publishes the undisturbed bytes', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 3);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) if (i !== 1) await chunk(steady, i, attemptOf({ scheduled: 1000 + i, n: 1 }));
  // Attempt 3 of chunk 1 answers three rows, then hangs on the agent.
  const third = chunk(stalled, 1, attemptOf({ scheduled: 1001, n: 3, current: 1003 }));
  third.catch(() => undefined);
  await until(() => stalling.held >= 1, 'attempt 3 waits on the agent');
  // `temporal activity reset`: the attempt count returns to one.
  const reset = await chunk(steady, 1, attemptOf({ scheduled: 1001, n: 1, current: 9000 }));
  assert.ok(reset.alreadyDone >= 3, `the reset attempt kept attempt 3's whole lines (${reset.alreadyDone})`);
  await finish(steady, attemptOf({ scheduled: 5000, n: 1 }));
  const settled = snapshot(steady.runDir);
  stalling.release();
  await assertChangedNothing(steady, third, settled, expected, 1500);
});

for (const mergedBeforeReset of [false, true]) {
  test(`a workflow reset ${mergedBeforeReset ? 'after' : 'before'} a merge, with a chunk at attempt 2, publishes the undisturbed bytes and the old run's attempt changes nothing`, async () => {
    const expected = await undisturbed();
    const stalling = await startAgent('alpha', 2);
    const { steady, stalled } = await stage(stalling);
    const { chunks } = await materialize(steady);
    await chunk(steady, 0, attemptOf({ scheduled: 1000, n: 1 }));
    // Run A: attempt 2 of chunk 1 answers two rows, then hangs on the agent (its host is cut off).
    const old = chunk(stalled, 1, attemptOf({ scheduled: 1001, n: 2, current: 1002 }));
    old.catch(() => undefined);
    await until(() => stalling.held >= 1, "run A's attempt 2 waits on the agent");
    const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
    const mergedA = (await attemptOf({ scheduled: 3000, n: 1 }).run(mergeChunks, mergeInput)) as MergeProgress;
    // Run B, the reset run: the same scheduled times, attempts counted from 1 again. Reset after the
    // merge completed, B goes on from its progress; reset before, B runs the merge again.
    const inB = (scheduled: number) => attemptOf({ scheduled, n: 1, run: 'run-b' });
    for (let i = 1; i < chunks; i++) await chunk(steady, i, inB(1000 + i));
    const merged = mergedBeforeReset ? mergedA : ((await inB(3000).run(mergeChunks, mergeInput)) as MergeProgress);
    await finish(steady, inB(5000), merged);
    const settled = snapshot(steady.runDir);
    stalling.release();
    await assertChangedNothing(steady, old, settled, expected, 1500);
  });
}

test('a run resumed after a cancel, with a key re-run, publishes the undisturbed bytes while the cancelled finish still writes', async (t) => {
  const expected = await undisturbed();
  // Run A's agent fails one key without a trace (`_ng_no_persist`), so the resumed run runs it again.
  const flaky = await startAgent('alpha', Infinity, (row) => row.task_id === 't0');
  const { steady: resumed, stalled: cancelled } = await stage(flaky);
  const { chunks } = await materialize(resumed);
  for (let i = 0; i < chunks; i++) await chunk(cancelled, i, attemptOf({ scheduled: 1000 + i, n: 1 }));
  const mergeInput = { outPrefix: outPrefixOf(resumed), from: NOTHING_MERGED, to: 1 };
  const mergedA = (await attemptOf({ scheduled: 3000, n: 1 }).run(mergeChunks, mergeInput)) as MergeProgress;
  // Run A's finish holds between its look at the fence and its write of chunk 1, when it is cancelled.
  // Only run A's finish reaches the point before run B starts; B's merges pass.
  const stall = stallFirstAt('merge.checked');
  t.after(() => stall.release());
  const finishA = attemptOf({ scheduled: 5000, n: 1 });
  const oldFinish = finish(cancelled, finishA, mergedA);
  oldFinish.catch(() => undefined);
  await stall.held();
  finishA.cancel();
  // Run B resumes the same run directory from scratch: every chunk again (t0's rows run now), then its finish.
  const inB = (scheduled: number) => attemptOf({ scheduled, n: 1, run: 'run-b' });
  for (let i = 0; i < chunks; i++) await chunk(resumed, i, inB(1000 + i));
  await finish(resumed, inB(5000));
  const settled = snapshot(resumed.runDir);
  stall.wake();
  await assertChangedNothing(resumed, oldFinish, settled, expected, 500);
});
