import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeChunkIndex } from '../../../activities/chunk/chunkIndex';
import { completionStop } from '../../../activities/stage/requireComplete';
import { IncompleteCollectionError, NON_RETRYABLE_ERROR_TYPES } from '../../../contracts/errors';
import { collectPlan, outPrefixOf } from '../fakeGym';

// collect.require_complete (NeMo Gym 0.7.0's `check_completion`): a collect stage that completed
// fewer rollouts than it materialized stops the run, not retried, in 0.7.0's words; local profiling,
// a complete collect and a collect without the option go on.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-require-complete-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function materialized(name: string, requireComplete: boolean | undefined) {
  const plan = collectPlan(
    path.join(dir, name),
    {},
    requireComplete === undefined ? {} : { require_complete: requireComplete },
  );
  const outPrefix = outPrefixOf(plan);
  await writeChunkIndex(outPrefix, [0, 10], { rows: 8, tasks: 4, chunks: 1, chunkSize: 8 });
  return { plan, outPrefix };
}

test('an incomplete collect with require_complete stops the run in 0.7.0’s words, not retried', async () => {
  const { plan, outPrefix } = await materialized('incomplete', true);
  await assert.rejects(completionStop(plan, 'collect', outPrefix, 6), (err: unknown) => {
    assert.ok(err instanceof IncompleteCollectionError, String(err));
    assert.equal(
      err.message,
      `EVAL FAILED: 6/8 samples completed. Partial artifacts retained at ${outPrefix}.jsonl. ` +
        `The failed attempts are in ${outPrefix}_failures.jsonl (collect.require_complete).`,
    );
    return true;
  });
  assert.ok(NON_RETRYABLE_ERROR_TYPES.includes('IncompleteCollectionError'));
});

test('a complete collect, local profiling and a collect without the option go on', async () => {
  const on = await materialized('complete', true);
  await completionStop(on.plan, 'collect', on.outPrefix, 8);
  await completionStop(on.plan, 'local_profile', on.outPrefix, 0);
  for (const off of [false, undefined]) {
    const plain = await materialized(`off-${String(off)}`, off);
    await completionStop(plain.plan, 'collect', plain.outPrefix, 0);
  }
});
