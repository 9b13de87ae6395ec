import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from '../activities';
import { closePools } from '../activities/http/client';
import { closeEmbeddedStacks } from '../activities/servers';
import { TASK_QUEUE } from './connection';

// Any number of these may serve one task queue, on one machine or many: chunks are handed out by
// Temporal, and per-endpoint caps (activities/http/endpointLimiter.ts) bound what each sends.

export interface PivotWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  maxConcurrentActivities?: number;
}

export async function createPivotWorker(opts: PivotWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowsPath: require.resolve('../workflows'),
    activities,
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 32,
    // Shown in Temporal's history and UI for every task a worker took; defaults to pid@host.
    ...(process.env.PIVOT_MINER_WORKER_IDENTITY ? { identity: process.env.PIVOT_MINER_WORKER_IDENTITY } : {}),
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
  try {
    await worker.run();
  } finally {
    await releaseWorkerResources();
  }
}
