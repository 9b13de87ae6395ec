import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { waitForPollers } from '../../scripts/lib/pollers';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// Scale-out: two worker processes on one task queue share the chunks, and the run publishes the same
// dataset as a run served by one worker.

let env: TestWorkflowEnvironment;
let artifactsRoot: string;
const workers = new Set<ChildProcess>();

before(async () => {
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-2w-'));
  env = await startTestTemporal();
});

after(async () => {
  await Promise.all([...workers].map((w) => stopProcess(w)));
  await env?.teardown();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

function startWorker(taskQueue: string, identity: string): ChildProcess {
  const child = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue,
    artifactsRoot,
    env: { PIVOT_MINER_WORKER_IDENTITY: identity },
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  return child;
}

async function activityWorkers(workflowId: string): Promise<Set<string>> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const identities = new Set<string>();
  for (const event of history.events ?? []) {
    const identity = event.activityTaskStartedEventAttributes?.identity;
    if (identity) identities.add(identity);
  }
  return identities;
}

const run = (taskQueue: string, runId: string) =>
  runPivotMining(env.client, { taskQueue, configPath: 'configs/demo.yaml', runId, workflowId: `two-workers-${runId}` });

test(
  'two worker processes on one task queue both take chunks; the result equals a one-worker run',
  { timeout: 600_000 },
  async () => {
    const single = startWorker('q-single', 'single');
    const one = await run('q-single', 'one-worker');
    await stopProcess(single);

    startWorker('q-pair', 'worker-a');
    startWorker('q-pair', 'worker-b');
    await waitForPollers(env.client, 'q-pair', ['worker-a', 'worker-b']);
    const two = await run('q-pair', 'two-workers');

    const collectWorkers = await activityWorkers('two-workers-two-workers/collect');
    const profileWorkers = await activityWorkers('two-workers-two-workers/local_profile');
    assert.deepEqual([...new Set([...collectWorkers, ...profileWorkers])].sort(), ['worker-a', 'worker-b']);
    assert.equal(readFileSync(two.pivotsPath, 'utf8'), readFileSync(one.pivotsPath, 'utf8'));
    assert.equal(
      readFileSync(path.join(two.runDir, 'rollouts.jsonl'), 'utf8'),
      readFileSync(path.join(one.runDir, 'rollouts.jsonl'), 'utf8'),
    );
  },
);
