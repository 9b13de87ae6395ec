import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { awaitDataset, getProgress, InvalidInputError, startPivotMining } from '../../client';
import { validatePivotDataset } from '../../gym/validator';
import type { PivotMiningResult } from '../../contracts/payloads';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// The whole pipeline on a real Temporal dev server against the embedded HTTP servers.

const TASK_QUEUE = 'pivot-mining-test';
let stack: WorkerTestEnv;
let env: TestWorkflowEnvironment;
let artifactsRoot: string;

before(async () => {
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-wf-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: artifactsRoot });
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

async function runPipeline(runId: string): Promise<PivotMiningResult> {
  return runPivotMining(env.client, {
    taskQueue: TASK_QUEUE,
    configPath: 'configs/demo.yaml',
    runId,
    workflowId: `test-${runId}`,
  });
}

type Row = Record<string, any>;
const key = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;

test(
  'the demo pipeline publishes a validated, mixed-only pivot dataset, identically for the same seed',
  { timeout: 600_000 },
  async () => {
    const first = await runPipeline('first');
    const dir = first.runDir;

    // Materialization: tasks × num_repeats, abc → aabbcc, rollout indices 0..n-1 per task.
    const materialized = readJsonlSync<Row>(path.join(dir, 'rollouts_materialized_inputs.jsonl'));
    const numRepeats = 4;
    assert.equal(materialized.length, first.counts.tasks! * numRepeats);
    materialized.forEach((row, i) => {
      assert.equal(row._ng_task_index, Math.floor(i / numRepeats));
      assert.equal(row._ng_rollout_index, i % numRepeats);
    });

    // Every materialized key has exactly one rollout, in materialized order.
    const rollouts = readJsonlSync<Row>(path.join(dir, 'rollouts.jsonl'));
    assert.deepEqual(rollouts.map(key), materialized.map(key));

    // One profile row per task, whose mean reward is the mean of that task's rollouts.
    const profile = readJsonlSync<Row>(path.join(dir, 'rollouts_reward_profiling.jsonl'));
    assert.equal(profile.length, first.counts.tasks);
    for (const row of profile) {
      const rewards = rollouts.filter((r) => r._ng_task_index === row._ng_task_index).map((r) => r.reward as number);
      assert.equal(row.num_rollouts, rewards.length);
      assert.ok(Math.abs(row['mean/reward'] - rewards.reduce((a, b) => a + b, 0) / rewards.length) < 1e-12);
    }
    assert.ok(
      first.counts.tasks_all_pass! > 0 && first.counts.tasks_all_fail! > 0 && first.counts.tasks_mixed! > 0,
      JSON.stringify(first.counts),
    );

    // Each candidate's input is a prefix of its source trajectory (task input + response.output).
    const candidates = readJsonlSync<Row>(path.join(dir, 'candidates.jsonl'));
    assert.ok(candidates.length > 0);
    for (const c of candidates) {
      const source = rollouts.find(
        (r) => r._ng_task_index === c.provenance.task_index && r._ng_rollout_index === c.provenance.rollout_index,
      );
      assert.ok(source, `source rollout of candidate ${c.provenance.uuid}`);
      assert.equal(source.reward, 1);
      // keep_reasoning is off in the demo config, so prior reasoning items are not part of the prefix.
      const trajectory = [...source.responses_create_params.input, ...source.response.output].filter(
        (i: Row) => i.type !== 'reasoning',
      );
      const prefix = c.responses_create_params.input as unknown[];
      assert.deepEqual(trajectory.slice(0, prefix.length), prefix);
    }

    // Local profile: candidates × K samples.
    const localRollouts = readJsonlSync<Row>(path.join(dir, 'local_profile.jsonl'));
    assert.equal(localRollouts.length, candidates.length * 8);

    // Published pivots are all mixed, validated, and every branch of selection ran.
    assert.ok(
      first.counts.all_pass! > 0 && first.counts.all_fail! > 0 && first.counts.mixed! > 0,
      JSON.stringify(first.counts),
    );
    const pivots = readJsonlSync<Row>(first.pivotsPath);
    assert.equal(pivots.length, first.counts.published);
    const localProfile = readJsonlSync<Row>(path.join(dir, 'local_profile_reward_profiling.jsonl'));
    for (const p of pivots) {
      const c = candidates.findIndex((x) => x.provenance.uuid === p.provenance.uuid);
      const rate = localProfile.find((r) => r._ng_task_index === c)!['mean/reward'];
      assert.ok(rate > 0 && rate < 1, `pivot ${p.provenance.uuid} has pass rate ${rate}`);
    }
    const validation = await validatePivotDataset({
      path: first.pivotsPath,
      requireFields: [],
      requireAnyFields: [],
      checkToolNames: true,
      gymConfigPath: first.gymConfigPath,
    });
    assert.equal(validation.exitCode, 0, validation.stderr);

    // Same seed, new run directory, started through the training-platform client: byte-identical dataset.
    const workflowId = await startPivotMining(
      env.client,
      { config_path: 'configs/demo.yaml', run_id: 'second' },
      { workflowId: 'test-second', taskQueue: TASK_QUEUE },
    );
    const progress = await getProgress(env.client, workflowId);
    assert.ok(['RUNNING', 'COMPLETED'].includes(progress.status), progress.status);
    const second = await awaitDataset(env.client, workflowId);
    assert.equal((await getProgress(env.client, workflowId)).stage, 'done');
    await assert.rejects(
      startPivotMining(env.client, { config_path: 'configs/demo.yaml', api_key: 'x' } as never, {
        workflowId: 'bad',
        taskQueue: TASK_QUEUE,
      }),
      InvalidInputError,
    );
    assert.notEqual(second.pivotsPath, first.pivotsPath);
    assert.equal(readFileSync(second.pivotsPath, 'utf8'), readFileSync(first.pivotsPath, 'utf8'));
  },
);
