import path from 'node:path';
import { after, before } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { pipelineConfigSchema } from '../../contracts/config';
import type { PrefetchSegment, RunPlan } from '../../contracts/payloads';
import { startTestTemporal } from '../helpers/temporal';

// Shared setup of the early-profiling tests (earlyProfiling.test.ts, prefetchLocalProfile.test.ts):
// a dev server and a worker running the real run and early-profiling workflows against recorded
// stand-in activities and a stand-in chunked stage (fixtures/earlyProfilingWorkflows.ts). What a
// stand-in does is chosen by the run id of the plan it gets.

export const TASK_QUEUE = 'early-profiling-test';

/** Calls of the stand-in activities, by run id. */
export const calls = new Map<string, Array<[string, unknown]>>();
const record = (plan: { runId: string }, name: string, args: unknown) => {
  calls.set(plan.runId, [...(calls.get(plan.runId) ?? []), [name, args]]);
};

/** Set once `pivot-miner status`'s progress has listed the disk-full run's retried filing. */
let retryShown = false;

/** Lets the disk-full run's retried filing finish: status has listed it. */
export function markRetryShown(): void {
  retryShown = true;
}

/** When each run's first removal of early-profiling files began, by run id. */
export const firstRemovalAt = new Map<string, number>();

/** A run whose early profiling stalls (see alignPrefetched) gives up on it after this long. */
export const STALL_S = 2;

export function planOf(runId: string): RunPlan {
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

/** Polls `ready` every 50 ms for at most 30 s. */
export async function until(what: string, ready: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within 30 s`);
}

interface EarlyProfilingWorker {
  env: TestWorkflowEnvironment;
  close: () => Promise<void>;
}

/** A dev server and a worker on TASK_QUEUE running the fixture workflows with the stand-in activities. */
async function startEarlyProfilingWorker(): Promise<EarlyProfilingWorker> {
  const env = await startTestTemporal();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./fixtures/earlyProfilingWorkflows'),
    activities,
  }).catch(async (err: unknown) => {
    await env.teardown();
    throw err;
  });
  const workerDone = worker.run();
  const close = async () => {
    worker.shutdown();
    await workerDone;
    await env.teardown();
  };
  return { env, close };
}

/** The early-profiling worker of the calling file: started before its tests, stopped after them. */
export function earlyProfilingWorkerForFile(): { env: TestWorkflowEnvironment } {
  const suite = { env: undefined as never as TestWorkflowEnvironment };
  let worker: EarlyProfilingWorker | undefined;
  before(async () => {
    worker = await startEarlyProfilingWorker();
    suite.env = worker.env;
  });
  after(async () => {
    await worker?.close();
  });
  return suite;
}
