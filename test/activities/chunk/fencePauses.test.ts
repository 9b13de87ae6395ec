import { test } from 'node:test';
import { mergeChunks } from '../../../activities/stage/merge';
import { NOTHING_MERGED, type MergeProgress } from '../../../contracts/payloads';
import { stallFirstAt } from '../../helpers/stallFirst';
import { materialize, outPrefixOf } from '../fakeGym';
import { assertChangedNothing, attempt, chunk, finish, snapshot, stage, undisturbed } from './fenceSetup';

// An attempt held at each pause point of the fence until its successor finished: woken, it
// re-creates nothing.

for (const [point, step] of [
  ['fence.claimed', 'chunk'],
  ['chunk.opened', 'chunk'],
  ['merge.renamed', 'merge'],
  ['finish.checked', 'finish'],
] as const) {
  test(`a ${step} attempt held at ${point} that wakes after its successor finished re-creates nothing`, async (t) => {
    const expected = await undisturbed();
    const { steady } = await stage();
    const { chunks } = await materialize(steady);
    for (let i = 0; i < chunks; i++) if (step !== 'chunk' || i !== 1) await chunk(steady, i, attempt(1000 + i, 1));
    const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
    const mergedFirst = (await attempt(3000, 1).run(mergeChunks, mergeInput)) as MergeProgress;
    const stall = stallFirstAt(point);
    t.after(() => stall.release());
    const rest = { ...mergeInput, from: mergedFirst, to: chunks };
    const run = (n: number): Promise<unknown> => {
      if (step === 'chunk') return chunk(steady, 1, attempt(1001, n));
      if (step === 'merge') return attempt(3500, n).run(mergeChunks, rest);
      return finish(steady, attempt(5000, n), mergedFirst);
    };
    const first = run(1);
    first.catch(() => undefined);
    await stall.held();
    const second = await run(2);
    if (step !== 'finish')
      await finish(steady, attempt(5000, 1), step === 'merge' ? (second as MergeProgress) : mergedFirst);
    const settled = snapshot(steady.runDir);
    stall.wake();
    await assertChangedNothing(steady, first, settled, expected, 200);
  });
}
