import assert from 'node:assert/strict';
import { pivotMiningProgressQuery, stageProgressQuery } from '../../contracts/temporal';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { PivotMiningResult } from '../../contracts/payloads';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// Cancelling a run mid-collect leaves its shards; starting it again with the same run id reuses them
// and ends with the same dataset as an uninterrupted run.

const TASK_QUEUE = 'pivot-mining-cancel-test';
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let artifactsRoot: string;

before(async () => {
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-cancel-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: artifactsRoot });
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

const start = (workflowId: string, runId: string) =>
  env.client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{ config_path: 'configs/demo.yaml', run_id: runId }],
  });

test('cancel mid-collect keeps shards; the same run id resumes to the same dataset', { timeout: 600_000 }, async () => {
  const reference = (await (await start('cancel-reference', 'reference')).result()) as PivotMiningResult;

  const handle = await start('cancel-me', 'resumed');
  for (let i = 0; i < 2400; i++) {
    const progress = await handle.query(pivotMiningProgressQuery).catch(() => undefined);
    const child = progress?.childWorkflowId
      ? await env.client.workflow
          .getHandle(progress.childWorkflowId)
          .query(stageProgressQuery)
          .catch(() => undefined)
      : undefined;
    if (child?.stage === 'collect:chunks') break;
    await sleep(25);
  }
  await handle.cancel();
  await assert.rejects(handle.result(), WorkflowFailedError);
  assert.equal((await handle.describe()).status.name, 'CANCELLED');
  const runDir = path.join(artifactsRoot, 'runs', 'resumed');
  assert.ok(existsSync(path.join(runDir, 'rollouts_materialized_inputs.jsonl')));
  assert.ok(readdirSync(path.join(runDir, 'rollouts_shards')).length > 0, 'shards of the cancelled run are kept');

  const resumed = (await (await start('cancel-me-again', 'resumed')).result()) as PivotMiningResult;
  assert.equal(readFileSync(resumed.pivotsPath, 'utf8'), readFileSync(reference.pivotsPath, 'utf8'));
  assert.equal(
    readFileSync(path.join(resumed.runDir, 'rollouts.jsonl'), 'utf8'),
    readFileSync(path.join(reference.runDir, 'rollouts.jsonl'), 'utf8'),
  );
});
