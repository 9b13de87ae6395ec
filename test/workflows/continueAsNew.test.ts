import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { pipelineConfigSchema } from '../../contracts/config';
import { historyEventsPerRun } from '../../scripts/bench/history';
import { createPivotWorker, releaseWorkerResources } from '../../workers/pivotWorker';
import type { CollectStageInput, CollectStageResult, RunPlan } from '../../contracts/payloads';
import { startTestTemporal } from '../helpers/temporal';

// collectRolloutsWorkflow with a tiny history threshold: the chunk loop is carried over many runs,
// each run's history stays bounded by the threshold, and the merged result is the same as one run's.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-continue-as-new-test';
const CHUNKS_IN_FLIGHT = 2;
const HISTORY_LIMIT = 40;
// After the threshold trips, the chunks and the merge already in flight still finish (each adds at
// most started, completed and one workflow task = 5 events), and the run closes with one event; each
// run records one patch marker; the last run also finishes the merge, profiles and aggregates metrics
// (three activities, each at most 3 + 3 events). No run may exceed this.
const HISTORY_BOUND = HISTORY_LIMIT + (CHUNKS_IN_FLIGHT + 1) * 5 + 1 + 1 + 3 * 6;

let env: TestWorkflowEnvironment;
let worker: Worker;
let workerDone: Promise<void>;
let workDir: string;

before(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-can-'));
  env = await startTestTemporal();
  worker = await createPivotWorker({ connection: env.nativeConnection, taskQueue: TASK_QUEUE });
  workerDone = worker.run();
});

after(async () => {
  worker?.shutdown();
  await workerDone;
  await releaseWorkerResources();
  await env?.teardown();
  rmSync(workDir, { recursive: true, force: true });
});

function plan(runName: string): RunPlan {
  const runDir = path.join(workDir, runName);
  mkdirSync(runDir, { recursive: true });
  const config = pipelineConfigSchema.parse({
    name: 'continue_as_new_test',
    seed: 7,
    servers: { mode: 'embedded' },
    collect: {
      input_jsonl: 'configs/demo_tasks.jsonl',
      agent_name: 'demo_tool_agent',
      num_repeats: 2,
      chunk_size: 2,
      max_chunks_in_flight: CHUNKS_IN_FLIGHT,
      max_concurrency: 4,
    },
  });
  return { runId: runName, runDir, baseDir: repoRoot, config };
}

async function collect(runName: string, continueAsNewAfterEvents?: number) {
  const runPlan = plan(runName);
  const input: CollectStageInput = {
    plan: runPlan,
    stage: 'collect',
    inputPath: 'configs/demo_tasks.jsonl',
    outPrefix: path.join(runPlan.runDir, 'rollouts'),
    continueAsNewAfterEvents,
  };
  const workflowId = `continue-as-new-${runName}`;
  const handle = await env.client.workflow.start('collectRolloutsWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [input],
  });
  const result = (await handle.result()) as CollectStageResult;
  return { result, eventsPerRun: await historyEventsPerRun(env.client, workflowId, handle.firstExecutionRunId) };
}

test(
  'a collect stage continued as new keeps every run under the bound and merges the same rollouts',
  { timeout: 600_000 },
  async () => {
    const chained = await collect('chained', HISTORY_LIMIT);
    const single = await collect('single');

    assert.equal(single.eventsPerRun.length, 1);
    assert.ok(
      chained.result.materialize.chunks >= 20,
      `expected many chunks, got ${chained.result.materialize.chunks}`,
    );
    assert.ok(chained.eventsPerRun.length >= 3, `expected several runs, got ${chained.eventsPerRun.join(', ')}`);
    for (const events of chained.eventsPerRun) {
      assert.ok(
        events <= HISTORY_BOUND,
        `a run has ${events} history events, more than ${HISTORY_BOUND} (runs: ${chained.eventsPerRun.join(', ')})`,
      );
    }
    // Without the threshold, one run holds all chunks; the chain splits those events over its runs.
    assert.ok(single.eventsPerRun[0]! > HISTORY_BOUND);

    assert.equal(chained.result.merge.completed, single.result.merge.completed);
    assert.equal(chained.result.merge.completed, chained.result.materialize.rows);
    assert.deepEqual(
      { ...chained.result.profile, rewardProfilingPath: '', agentMetricsPath: '' },
      { ...single.result.profile, rewardProfilingPath: '', agentMetricsPath: '' },
    );
    assert.equal(
      readFileSync(chained.result.merge.rolloutsPath, 'utf8'),
      readFileSync(single.result.merge.rolloutsPath, 'utf8'),
    );
    assert.equal(
      readFileSync(chained.result.profile.rewardProfilingPath, 'utf8'),
      readFileSync(single.result.profile.rewardProfilingPath, 'utf8'),
    );
  },
);
