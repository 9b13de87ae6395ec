import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { pipelineConfigSchema } from '../../contracts/config';
import { runCandidatesSignal, chunksFinishedSignal, pivotMiningProgressQuery } from '../../contracts/temporal';
import type { PrefetchResult, PrefetchSegment, RunPlan } from '../../contracts/payloads';
import { startTestTemporal } from '../helpers/temporal';
import { getProgress } from '../../client';

// Early profiling is an optimisation: whatever becomes of it (cancelled or terminated by an operator,
// its clean-up failing, a run with no candidates, a continue-as-new between the run's signals), the
// run finishes on live sampling and nothing of it is left. The real run and early-profiling workflows
// run on a real dev server against recorded stand-in activities and a stand-in chunked stage
// (fixtures/earlyProfilingWorkflows.ts).

const TASK_QUEUE = 'early-profiling-test';
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerDone: Promise<void>;

/** Calls of the stand-in activities, by run id. */
const calls = new Map<string, Array<[string, unknown]>>();
const record = (plan: { runId: string }, name: string, args: unknown) => {
  calls.set(plan.runId, [...(calls.get(plan.runId) ?? []), [name, args]]);
};

/** Set once `pivot-miner status`'s progress has listed the disk-full run's retried filing. */
let retryShown = false;

/** When each run's first removal of early-profiling files began, by run id. */
const firstRemovalAt = new Map<string, number>();

/** A run whose early profiling stalls (see alignPrefetched) gives up on it after this long. */
const STALL_S = 2;

function planOf(runId: string): RunPlan {
  const config = pipelineConfigSchema.parse({
    name: 'early_profiling_test',
    seed: 1,
    servers: { mode: 'embedded' },
    collect: { input_jsonl: 'configs/demo_tasks.jsonl', agent_name: 'demo_tool_agent' },
    ...(runId === 'stalled' ? { overlap_stall_s: STALL_S } : {}),
  });
  return { runId, runDir: path.join('/nonexistent', runId), baseDir: '/nonexistent', config };
}

const activities = {
  prepareRun: async (input: { run_id: string }): Promise<RunPlan> => ({
    ...planOf(input.run_id),
    ...(input.run_id.startsWith('resumed') ? { localProfileBegun: true } : {}),
  }),
  ensureServers: async () => ({ simulated: true }),
  convertStage: async ({ plan }: { plan: RunPlan }) => ({
    candidatesPath: `${plan.runDir}/candidates.jsonl`,
    skippedPath: `${plan.runDir}/skipped.jsonl`,
    metricsPath: `${plan.runDir}/convert_metrics.json`,
    positiveTrajectories: 2,
    decisionPoints: 2,
    candidates: plan.runId.startsWith('no-candidates') ? 0 : 2,
    skipped: 0,
    deduped: 0,
  }),
  publishStage: async ({ plan }: { plan: RunPlan }) => ({
    pivotsPath: `${plan.runDir}/pivots.jsonl`,
    gymConfigPath: `${plan.runDir}/gym.yaml`,
    selectionMetricsPath: `${plan.runDir}/selection_metrics.json`,
    reportPath: `${plan.runDir}/report.html`,
    validatorExitCode: 0,
    counts: { published: 1 },
  }),
  prefetchSegment: async (input: {
    plan: RunPlan;
    fromRow: number;
    finishedChunks: number;
  }): Promise<PrefetchSegment> => {
    const toRow = input.finishedChunks * 2;
    if (toRow === input.fromRow) return { toRow, candidates: 0 };
    const dir = `${input.plan.runDir}/prefetch/rows-${input.fromRow}-${toRow}`;
    return { toRow, dir, candidatesPath: `${dir}/candidates.jsonl`, candidates: 1 };
  },
  alignPrefetched: async (input: { plan: RunPlan; candidatesPath: string; pending?: string[] }) => {
    record(input.plan, 'alignPrefetched', input.candidatesPath);
    // The operator's cancel comes while the samples are being filed, as in the report.
    // A stalled early profiling files for ever; only the run's cancellation of it ends the filing.
    // Reset by an operator, its first filing is abandoned and files again.
    // A full disk under the filing: its first attempt fails, the retry waits until status has shown it.
    if (input.plan.runId === 'disk-full' && calls.get('disk-full')!.length === 1)
      throw new Error("ENOSPC: no space left on device, open '/artifacts/local_profile_prefetched/pending.jsonl'");
    if (input.plan.runId === 'disk-full') await until('status shows the retry', () => retryShown);
    const blocks = input.plan.runId === 'cancel' || input.plan.runId === 'stalled';
    if (blocks || (input.plan.runId === 'reset' && calls.get('reset')!.length === 1)) await heartbeatUntilCancelled();
    return { reused: 1, rows: 2, wholeChunks: [] };
  },
  alignPending: async (input: { plan: RunPlan }) => {
    record(input.plan, 'alignPending', null);
    return { reused: 1, wholeChunks: [] };
  },
  removeEarlyProfiling: async (input: { runDir: string; part: string }) => {
    const runId = path.basename(input.runDir);
    record({ runId }, 'removeEarlyProfiling', input.part);
    if (!firstRemovalAt.has(runId)) firstRemovalAt.set(runId, Date.now());
    if (runId.startsWith('removal-fails')) throw ApplicationFailure.nonRetryable('EBUSY: resource busy', 'Error');
  },
};

async function heartbeatUntilCancelled(): Promise<never> {
  for (;;) {
    Context.current().heartbeat();
    await Context.current().sleep(100);
  }
}

before(async () => {
  env = await startTestTemporal();
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./fixtures/earlyProfilingWorkflows'),
    activities,
  });
  workerDone = worker.run();
});

after(async () => {
  worker?.shutdown();
  await workerDone;
  await env?.teardown();
});

const removed = (runId: string) =>
  (calls.get(runId) ?? []).filter(([name]) => name === 'removeEarlyProfiling').map(([, part]) => part);

async function startRun(runId: string) {
  return env.client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `early-${runId}`,
    args: [{ config_path: 'configs/demo.yaml', run_id: runId }],
  });
}

/** Polls `ready` every 50 ms for at most 30 s. */
async function until(what: string, ready: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within 30 s`);
}

/** Waits until the run waits on early profiling (its stage is local_profile, early profiling running). */
async function untilWaitingOnEarly(workflowId: string): Promise<void> {
  const handle = env.client.workflow.getHandle(workflowId);
  await until(`${workflowId} waits on early profiling`, async () => {
    const progress = await handle.query(pivotMiningProgressQuery);
    return progress.stage === 'local_profile' && progress.prefetchWorkflowId !== null;
  });
}

test('an operator’s cancel of early profiling alone falls back to live sampling and removes its files', async () => {
  const handle = await startRun('cancel');
  await until('early profiling files the samples', () => (calls.get('cancel') ?? []).length > 0);
  await env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).cancel();
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
  const early = await env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe();
  assert.equal(early.status.name, 'CANCELLED');
  assert.deepEqual(removed('stalled').sort(), ['matched', 'segments']);
});

test('an operator’s reset of early profiling while it files still ends in a published run, files removed', async () => {
  const handle = await startRun('reset');
  await until('early profiling files the samples', () => (calls.get('reset') ?? []).length > 0);
  const early = env.client.workflow.getHandle(`${handle.workflowId}/prefetch`);
  const { events } = await early.fetchHistory();
  const lastTask = events!.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1)!;
  await env.client.workflowService.resetWorkflowExecution({
    namespace: env.client.options.namespace,
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
  await env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).terminate('operator');
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
  const early = await env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe();
  assert.equal(early.status.name, 'CANCELLED');
  // No segment of it can start after the removal: it had ended before.
  assert.ok(early.closeTime!.getTime() <= firstRemovalAt.get('collect-stops')!, 'early profiling ended first');
});

test('status lists early profiling’s retried steps among what the run waits for', async () => {
  const handle = await startRun('disk-full');
  await until('the retried filing is listed', async () => {
    const { waiting } = await getProgress(env.client, handle.workflowId);
    const filing = waiting.find((r) => r.activityType === 'alignPrefetched');
    if (!filing) return false;
    assert.equal(filing.workflowId, `${handle.workflowId}/prefetch`);
    assert.match(filing.lastFailure, /ENOSPC: no space left on device, open '\/artifacts\//);
    return (retryShown = true);
  });
  assert.equal((await handle.result()).counts.published, 1);
});

test('a resume that finds the run’s local profile begun profiles nothing early again', async () => {
  const handle = await startRun('resumed');
  const result = await handle.result();
  assert.equal(result.counts.published, 1);
  assert.equal(result.prefetch, undefined);
  await assert.rejects(env.client.workflow.getHandle(`${handle.workflowId}/prefetch`).describe(), /not found/i);
});

/**
 * The signals early profiling gets from collect (`final`) and from the run (`candidates`), in order;
 * `continued`: wait until it has continued as new.
 */
type Signals = Array<'final' | 'candidates' | 'continued'>;

/**
 * Early profiling with a history limit so low that it continues as new once the segment it started
 * ends; `signals` arrive while that segment runs.
 */
async function continuedEarlyProfiling(runId: string, signals: Signals): Promise<void> {
  const plan = planOf(runId);
  const workflowId = `early-${runId}/prefetch`;
  const handle = await env.client.workflow.start('prefetchLocalProfileWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{ plan, collectPrefix: `${plan.runDir}/rollouts`, alignForRun: true, continueAsNewAfterEvents: 10 }],
  });
  await handle.signal(chunksFinishedSignal, { chunks: 1, final: false });
  const segmentRuns = () =>
    env.client.workflow
      .getHandle(`${workflowId}/rows-0-2`)
      .describe()
      .then(
        () => true,
        () => false,
      );
  await until('the first segment runs', segmentRuns);
  const candidatesPath = `${plan.runDir}/candidates.jsonl`;
  for (const signal of signals) {
    if (signal === 'final') await handle.signal(chunksFinishedSignal, { chunks: 2, final: true });
    else if (signal === 'candidates') await handle.signal(runCandidatesSignal, { candidatesPath, outPrefix: 'x' });
    else await until('continued as new', async () => (await handle.describe()).runId !== handle.firstExecutionRunId);
  }
  const result = await Promise.race([
    handle.result() as Promise<PrefetchResult>,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('early profiling hung')), 30_000)),
  ]);
  const { runId: lastRun, ...described } = await handle.describe();
  assert.notEqual(lastRun, handle.firstExecutionRunId, `continued as new: ${JSON.stringify(described.status)}`);
  assert.ok(result.aligned, 'the samples were filed for the run');
  const filings = (calls.get(runId) ?? []).filter(([name]) => name === 'alignPrefetched');
  assert.deepEqual(filings, [['alignPrefetched', candidatesPath]]);
}

// The history is past its limit while the first segment runs, so the loop waits for it to end and
// then continues as new: whatever collect and the run sent meanwhile, in either order, still counts.
test('the run’s candidates survive a continue-as-new of early profiling while a segment runs', () =>
  continuedEarlyProfiling('continued', ['final', 'candidates']));

test('the run’s candidates sent before collect’s last chunks survive a continue-as-new', () =>
  continuedEarlyProfiling('continued-candidates-first', ['candidates', 'final']));

test('the run’s candidates sent after a continue-as-new are taken', () =>
  continuedEarlyProfiling('continued-candidates-after', ['final', 'continued', 'candidates']));
