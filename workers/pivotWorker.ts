import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { closePools } from '../activities/http/client';
import { closeEmbeddedStacks } from '../activities/run/servers';
import { hostTaskQueue, runManagedServers } from '../activities/run/spawn';
import { TASK_QUEUE } from './connection';
import { rolloutMetricsInterceptor } from './metrics';
import { collectStartupGarbage } from './startupGarbage';
import { workflowBundlePath } from './workflowBundle';

// Any number of these may serve one task queue, on one machine or many: chunks are handed out by
// Temporal, and per-endpoint caps (activities/http/endpointLimiter.ts) bound what each sends.

export interface PivotWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  maxConcurrentActivities?: number;
  /** Base dir, artifacts root and secrets of the activities; default: this process's environment. */
  activityDeps?: ActivityDeps;
}

export async function createPivotWorker(opts: PivotWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowBundle: { codePath: await workflowBundlePath() },
    activities: createActivities(opts.activityDeps),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 32,
    interceptors: { activity: [rolloutMetricsInterceptor] },
    // Shown in Temporal's history and UI for every task a worker took; defaults to pid@host.
    ...(process.env.PIVOT_MINER_WORKER_IDENTITY ? { identity: process.env.PIVOT_MINER_WORKER_IDENTITY } : {}),
  });
}

/**
 * The per-host worker for `servers.mode: spawn`: it polls a queue named after this host, so the
 * long-running server process and its heartbeats stay on the machine that started it.
 */
export async function createHostWorker(opts: PivotWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: hostTaskQueue(opts.taskQueue ?? TASK_QUEUE),
    activities: { runManagedServers },
    maxConcurrentActivityTaskExecutions: 4,
  });
}

/** Stops what activities started in this process (embedded servers, HTTP pools) once its worker is done. */
export async function releaseWorkerResources(): Promise<void> {
  await closeEmbeddedStacks();
  await closePools();
}

/** Runs a worker until it is shut down (SIGINT/SIGTERM), then stops the embedded servers it started. */
export async function runPivotWorker(opts: PivotWorkerOptions): Promise<void> {
  const worker = await createPivotWorker(opts);
  const hostWorker = await createHostWorker(opts);
  collectStartupGarbage();
  try {
    await Promise.all([worker.run(), hostWorker.run()]);
  } finally {
    await releaseWorkerResources();
  }
}
