import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { submitPolicyCheckpoint } from '../../../client';
import { onPause } from '../../../activities/run/testHooks';
import { pivotKey } from '../../../gym/pivotIdentity';
import type { NightlyMiningResult } from '../../../contracts/poolPayloads';
import { readJsonlSync } from '../../helpers/jsonl';
import { addSource, setupPoolTest, type PoolTestContext } from '../../workflows/poolSetup';

// A worker lost right after it committed a pool version, before its activity reported done (a
// SIGKILL, or a power cut once the rename was synced): Temporal retries the publish, and the retry
// must finish what the commit left undone (`latest`, the sources manifest, the retirements) without
// staging the version again. Before, a nightly retry failed on the name its version already held,
// and a curriculum retry published the round a second time as `round-001-2`.

let ctx: PoolTestContext;

before(async () => {
  ctx = await setupPoolTest('pool-commit-test', { 'all.jsonl': () => true });
});

after(async () => {
  await ctx?.close();
});

/** Fails each version's first attempt once its commit is done, as a worker dying there would. */
function loseWorkerAfterEachCommit(): { committed: string[]; stop: () => void } {
  const committed: string[] = [];
  const stop = onPause('version.committed', (id) => {
    committed.push(id);
    throw new Error(`worker lost after committing ${id}`);
  });
  return { committed, stop };
}

test(
  'a nightly publish and a curriculum round retried after their commit publish each version once',
  {
    timeout: 600_000,
  },
  async () => {
    const { client } = ctx.env;
    const lost = loseWorkerAfterEachCommit();
    try {
      addSource(ctx, 'all.jsonl');
      const nightly = (await client.workflow.execute('nightlyMiningWorkflow', {
        taskQueue: ctx.taskQueue,
        workflowId: 'nightly-commit',
        args: [{ config_path: ctx.configPath }],
      })) as NightlyMiningResult;
      assert.equal(nightly.status, 'published', nightly.message);
      assert.deepEqual(lost.committed, [nightly.versionId], 'the retry did not commit again');
      const poolDir = nightly.poolDir;
      assert.deepEqual(readdirSync(path.join(poolDir, 'versions')), [nightly.versionId]);
      assert.equal(path.basename(readlinkSync(path.join(poolDir, 'latest'))), nightly.versionId);
      const pivots = readJsonlSync(nightly.pivotsPath!);
      const version = JSON.parse(
        readFileSync(path.join(poolDir, 'versions', nightly.versionId!, 'version.json'), 'utf8'),
      );
      assert.deepEqual(version.counts, nightly.counts, 'the retry reports the committed counts');
      assert.equal(version.counts.previous_pivots, 0);
      assert.equal(version.counts.pivots, pivots.length);
      const manifest = JSON.parse(readFileSync(path.join(poolDir, 'manifest.json'), 'utf8'));
      assert.deepEqual(
        manifest.sources.map((s: { version: string }) => s.version),
        [nightly.versionId],
        'the retry recorded the source',
      );

      const workflowId = 'curriculum-commit';
      const handle = await client.workflow.start('pivotCurriculumWorkflow', {
        taskQueue: ctx.taskQueue,
        workflowId,
        args: [{ config_path: ctx.configPath }],
      });
      const round = await submitPolicyCheckpoint(client, workflowId, { model: 'sim-policy@step-6', training_step: 6 });
      await handle.cancel();
      assert.deepEqual(lost.committed, [nightly.versionId, round.versionId]);
      const curriculumDir = path.dirname(path.dirname(path.dirname(round.pivotsPath)));
      assert.deepEqual(readdirSync(path.join(curriculumDir, 'versions')), ['round-001']);
      assert.equal(round.versionId, 'round-001');
      assert.equal(path.basename(readlinkSync(path.join(curriculumDir, 'latest'))), 'round-001');
      assert.equal(readJsonlSync(round.pivotsPath).length, round.kept);
      const retired = readJsonlSync(path.join(curriculumDir, 'retired.jsonl')) as Array<{ key: string; round: number }>;
      assert.ok(round.retiredLearned + round.retiredUnsolvable > 0, JSON.stringify(round));
      assert.equal(retired.length, round.retiredLearned + round.retiredUnsolvable);
      assert.equal(new Set(retired.map((r) => r.key)).size, retired.length, 'each retirement recorded once');
      assert.ok(retired.every((r) => r.round === 1));
      const kept = new Set(readJsonlSync(round.pivotsPath).map(pivotKey));
      assert.ok(
        retired.every((r) => !kept.has(r.key)),
        'a retired pivot is not kept',
      );
    } finally {
      lost.stop();
    }
  },
);
