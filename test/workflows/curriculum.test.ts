import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { getCurriculumRounds, submitPolicyCheckpoint } from '../../client';
import { pivotKey } from '../../gym/pivotIdentity';
import { pivotGymConfigFileName } from '../../gym/gymConfig';
import { validatePivotDataset } from '../../gym/validator';
import type { CurriculumRound, NightlyMiningResult } from '../../contracts/poolPayloads';
import { runCli } from '../helpers/cli';
import { readJsonlSync } from '../helpers/jsonl';
import { addSource, setupPoolTest, type PoolTestContext } from './poolSetup';

// The pivot loop on a real dev server: a simulated policy that improves with the training step in
// its model name learns pivots, which retire, so the pool shrinks round by round. It is started and
// read back through the CLI (`pivot-miner curriculum start` / `rounds`, over client/), and fed
// checkpoints through client/ as a trainer would.

let ctx: PoolTestContext;

before(async () => {
  ctx = await setupPoolTest('curriculum-test', { 'all.jsonl': () => true });
});

after(async () => {
  await ctx?.close();
});

test(
  'each policy checkpoint re-profiles the pool, retires learned pivots and publishes a valid version',
  { timeout: 600_000 },
  async () => {
    const { client } = ctx.env;
    addSource(ctx, 'all.jsonl');
    const nightly = (await client.workflow.execute('nightlyMiningWorkflow', {
      taskQueue: ctx.taskQueue,
      workflowId: 'nightly-once',
      args: [{ config_path: ctx.configPath }],
    })) as NightlyMiningResult;
    const initial = readJsonlSync(nightly.pivotsPath!);
    assert.ok(initial.length >= 5, `initial pool too small: ${initial.length}`);

    const workflowId = 'curriculum-demo';
    const cli = (args: string[]) =>
      runCli(['curriculum', ...args], {
        cwd: ctx.baseDir,
        env: { TEMPORAL_ADDRESS: ctx.env.address, PIVOT_MINER_TASK_QUEUE: ctx.taskQueue },
      });
    const started = await cli(['start', '-c', ctx.configPath, '--workflow-id', workflowId]);
    assert.equal(started.code, 0, started.stderr);
    assert.equal(started.stdout.trim(), workflowId);
    const handle = client.workflow.getHandle(workflowId);

    const rounds: CurriculumRound[] = [];
    for (const step of [1, 3, 6]) {
      rounds.push(
        await submitPolicyCheckpoint(client, workflowId, { model: `sim-policy@step-${step}`, training_step: step }),
      );
    }

    let previousSize = initial.length;
    const seen = new Set(initial.map(pivotKey));
    for (const [i, round] of rounds.entries()) {
      assert.equal(round.round, i + 1);
      assert.equal(round.poolSize, previousSize, 'a round profiles what the last one kept');
      const rows = readJsonlSync(round.pivotsPath);
      assert.equal(rows.length, round.kept);
      assert.equal(round.kept + round.retiredLearned + round.retiredUnsolvable + round.dropped, round.poolSize);
      for (const row of rows) assert.ok(seen.has(pivotKey(row)), 'a round only keeps pivots of the pool');
      if (rows.length > 0) {
        const gymConfig = path.join(path.dirname(round.pivotsPath), pivotGymConfigFileName('nightly_pivots'));
        const validation = await validatePivotDataset({
          path: round.pivotsPath,
          agentRef: 'nightly_pivots_pivot_agent',
          gymConfigPath: gymConfig,
          checkToolNames: true,
        });
        assert.equal(validation.exitCode, 0, validation.stderr);
      }
      for (const row of rows as any[])
        assert.ok(row.provenance.local_pass_rate > 0 && row.provenance.local_pass_rate < 1);
      previousSize = round.kept;
    }
    assert.ok(rounds.reduce((n, r) => n + r.retiredLearned, 0) > 0, 'the improving policy learns some pivots');
    assert.ok(rounds[2]!.kept < rounds[0]!.poolSize, JSON.stringify(rounds));
    assert.ok(rounds[2]!.meanPassRate > rounds[0]!.meanPassRate, 'a later checkpoint passes more often');

    // The rounds query (after continue-as-new) matches the update results and the files.
    assert.deepEqual(await getCurriculumRounds(client, workflowId), rounds);
    const listed = await cli(['rounds', workflowId]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), rounds);
    const curriculumDir = path.dirname(path.dirname(path.dirname(rounds[2]!.pivotsPath)));
    assert.equal(path.basename(readlinkSync(path.join(curriculumDir, 'latest'))), rounds[2]!.versionId);
    const retired = readFileSync(path.join(curriculumDir, 'retired.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(
      retired.filter((r) => r.reason === 'learned').length,
      rounds.reduce((n, r) => n + r.retiredLearned, 0),
    );

    // Cancelling leaves the last published version in place.
    const lastFile = readFileSync(rounds[2]!.pivotsPath, 'utf8');
    await handle.cancel();
    await assert.rejects(handle.result());
    assert.equal(readFileSync(path.join(curriculumDir, 'latest', 'pivots.jsonl'), 'utf8'), lastFile);
  },
);
