import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { pivotMiningProgressQuery } from '../../contracts/temporal';
import { getProgress } from '../../client';
import {
  calls,
  earlyProfilingWorkerForFile,
  firstRemovalAt,
  markRetryShown,
  STALL_S,
  TASK_QUEUE,
  until,
} from './earlyProfilingSetup';

// Early profiling is an optimisation: whatever becomes of it (cancelled or terminated by an operator,
// its clean-up failing, a run with no candidates), the run finishes on live sampling and nothing of
// it is left. The real run and early-profiling workflows run on a real dev server against recorded
// stand-in activities and a stand-in chunked stage (earlyProfilingSetup.ts). A continue-as-new of
// early profiling between the run's signals is prefetchLocalProfile.test.ts.

const worker = earlyProfilingWorkerForFile();

const removed = (runId: string) =>
  (calls.get(runId) ?? []).filter(([name]) => name === 'removeEarlyProfiling').map(([, part]) => part);

async function startRun(runId: string) {
  return worker.env.client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `early-${runId}`,
    args: [{ config_path: 'configs/demo.yaml', run_id: runId }],
  });
}

/** Waits until the run waits on early profiling (its stage is local_profile, early profiling running). */
async function untilWaitingOnEarly(workflowId: string): Promise<void> {
  const handle = worker.env.client.workflow.getHandle(workflowId);
  await until(`${workflowId} waits on early profiling`, async () => {
    const progress = await handle.query(pivotMiningProgressQuery);
    return progress.stage === 'local_profile' && progress.prefetchWorkflowId !== null;
  });
}

test('an operator’s cancel of early profiling alone falls back to live sampling and removes its files', async () => {
  const handle = await startRun('cancel');
  await until('early profiling files the samples', () => (calls.get('cancel') ?? []).length > 0);
  await worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).cancel();
  const result = await handle.result();
  assert.equal(result.prefetch, undefined, 'nothing early was reused');
  assert.deepEqual(removed('cancel').sort(), ['matched', 'segments']);
});

test('a run gives up on early profiling that stalls, samples live and removes its files', async () => {
  const handle = await startRun('stalled');
  const started = Date.now();
  const result = await Promise.race([
    handle.result(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the run still waits after 30 s')), 30_000)),
  ]);
  assert.equal(result.prefetch, undefined, 'nothing early was reused');
  assert.ok(Date.now() - started >= STALL_S * 1000, 'not given up before its stall bound');
  const early = await worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe();
  assert.equal(early.status.name, 'CANCELLED');
  assert.deepEqual(removed('stalled').sort(), ['matched', 'segments']);
});

test('an operator’s reset of early profiling while it files still ends in a published run, files removed', async () => {
  const handle = await startRun('reset');
  await until('early profiling files the samples', () => (calls.get('reset') ?? []).length > 0);
  const early = worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`);
  const { events } = await early.fetchHistory();
  const lastTask = events!.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1)!;
  await worker.env.client.workflowService.resetWorkflowExecution({
    namespace: worker.env.client.options.namespace,
    workflowExecution: { workflowId: early.workflowId },
    reason: 'operator reset in a test',
    workflowTaskFinishEventId: lastTask.eventId,
    requestId: `reset-${Date.now()}`,
  });
  const result = await Promise.race([
    handle.result(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the run still waits after 60 s')), 60_000)),
  ]);
  assert.equal(result.counts.published, 1);
  assert.deepEqual(removed('reset').sort(), ['matched', 'segments']);
});

test('a terminated early profiling leaves no files behind', async () => {
  const handle = await startRun('terminate');
  await untilWaitingOnEarly(handle.workflowId);
  await worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).terminate('operator');
  await handle.result();
  assert.deepEqual(removed('terminate').sort(), ['matched', 'segments']);
});

test('a clean-up that fails after its retries is logged, and the finished run still publishes', async () => {
  const result = await (await startRun('removal-fails')).result();
  assert.equal(result.counts.published, 1);
  assert.deepEqual(removed('removal-fails').sort(), ['matched', 'segments']);
});

test('a run with no candidates still removes early profiling’s files', async () => {
  const handle = await startRun('no-candidates');
  await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError);
  assert.deepEqual(removed('no-candidates').sort(), ['matched', 'segments']);
});

test('a collect that stops the run stops early profiling first, then removes its files', async () => {
  const handle = await startRun('collect-stops');
  await assert.rejects(handle.result(), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.match(String(err.cause?.cause), /EVAL FAILED: 3\/4 samples completed/);
    return true;
  });
  assert.deepEqual(removed('collect-stops').sort(), ['matched', 'segments']);
  const early = await worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe();
  assert.equal(early.status.name, 'CANCELLED');
  // No segment of it can start after the removal: it had ended before.
  assert.ok(early.closeTime!.getTime() <= firstRemovalAt.get('collect-stops')!, 'early profiling ended first');
});

test('status lists early profiling’s retried steps among what the run waits for', async () => {
  const handle = await startRun('disk-full');
  await until('the retried filing is listed', async () => {
    const { waiting } = await getProgress(worker.env.client, handle.workflowId);
    const filing = waiting.find((r) => r.activityType === 'alignPrefetched');
    if (!filing) return false;
    assert.equal(filing.workflowId, `${handle.workflowId}/prefetch`);
    assert.match(filing.lastFailure, /ENOSPC: no space left on device, open '\/artifacts\//);
    markRetryShown();
    return true;
  });
  assert.equal((await handle.result()).counts.published, 1);
});

test('a resume that finds the run’s local profile begun profiles nothing early again', async () => {
  const handle = await startRun('resumed');
  const result = await handle.result();
  assert.equal(result.counts.published, 1);
  assert.equal(result.prefetch, undefined);
  await assert.rejects(worker.env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe(), /not found/i);
});
