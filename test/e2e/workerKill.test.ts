import assert from 'node:assert/strict';
import { pivotMiningProgressQuery, stageProgressQuery } from '../../contracts/temporal';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import type { PivotMiningResult, StageProgress } from '../../contracts/payloads';
import { startTestTemporal } from '../helpers/temporal';

// A worker process SIGKILLed in the middle of a run, then started again: the run completes with the
// same pivots.jsonl as an undisturbed run. Workers are real child processes (`pivot-miner worker`).

const TASK_QUEUE = 'pivot-mining-kill-test';
let env: TestWorkflowEnvironment;
let artifactsRoot: string;
const workers = new Set<ChildProcess>();

before(async () => {
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-kill-'));
  env = await startTestTemporal();
});

after(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await env?.teardown();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

function startWorkerProcess(): ChildProcess {
  const child = spawnWorkerProcess({ temporalAddress: env.address, taskQueue: TASK_QUEUE, artifactsRoot });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  return child;
}

async function childProgress(workflowId: string): Promise<StageProgress | undefined> {
  try {
    const progress = await env.client.workflow.getHandle(workflowId).query(pivotMiningProgressQuery);
    if (!progress.childWorkflowId) return undefined;
    return await env.client.workflow.getHandle(progress.childWorkflowId).query(stageProgressQuery);
  } catch {
    return undefined;
  }
}

function startRun(runId: string) {
  return env.client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `kill-test-${runId}`,
    args: [{ config_path: 'configs/demo.yaml', run_id: runId }],
  });
}

test(
  'SIGKILL of the worker mid-run, then a restart: same pivots.jsonl as an undisturbed run',
  { timeout: 900_000 },
  async () => {
    let worker = startWorkerProcess();
    const undisturbed = (await (await startRun('undisturbed')).result()) as PivotMiningResult;

    const handle = await startRun('killed');
    const kills: string[] = [];
    // Kill once during collect and once during local profiling, after some chunk work has happened.
    for (const stage of ['collect', 'local_profile']) {
      for (let i = 0; i < 2400; i++) {
        const p = await childProgress(handle.workflowId);
        if (p && p.stage.startsWith(stage) && p.stage.endsWith(':chunks')) break;
        await sleep(50);
      }
      await stopProcess(worker, 'SIGKILL');
      kills.push(stage);
      worker = startWorkerProcess();
    }
    const killed = (await handle.result()) as PivotMiningResult;
    assert.deepEqual(kills, ['collect', 'local_profile']);
    assert.equal(readFileSync(killed.pivotsPath, 'utf8'), readFileSync(undisturbed.pivotsPath, 'utf8'));
    assert.equal(
      readFileSync(path.join(killed.runDir, 'rollouts.jsonl'), 'utf8'),
      readFileSync(path.join(undisturbed.runDir, 'rollouts.jsonl'), 'utf8'),
    );
    assert.deepEqual(killed.counts, undisturbed.counts);
  },
);
