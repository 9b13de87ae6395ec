import path from 'node:path';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { PivotMiningResult } from '../../contracts/payloads';
import { temporalBinary } from '../../scripts/lib/temporalCli';
import { createPivotWorker, releaseWorkerResources } from '../../workers/pivotWorker';

/** A real Temporal dev server for tests, from the binary we build (nothing is downloaded). */
export async function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalBinary() }, extraArgs: ['--log-level', 'error'] },
  });
}

export interface WorkerTestEnv {
  env: TestWorkflowEnvironment;
  worker: Worker;
  stop(): Promise<void>;
}

/**
 * A real dev server plus an in-process pivot worker on `taskQueue`. The worker's activities read the
 * PIVOT_MINER_* variables (base dir, artifacts root) when it is created; `workerEnv` is also set in
 * this process for the life of the worker (in-process embedded servers read it) and put back by stop().
 */
export async function startWorkerTestEnv(
  taskQueue: string,
  workerEnv: Record<string, string | undefined> = {},
): Promise<WorkerTestEnv> {
  const saved = Object.fromEntries(Object.keys(workerEnv).map((k) => [k, process.env[k]]));
  const apply = (vars: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(vars)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(workerEnv);
  const env = await startTestTemporal();
  const worker = await createPivotWorker({ connection: env.nativeConnection, taskQueue });
  const running = worker.run();
  return {
    env,
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await releaseWorkerResources();
      await env.teardown();
      apply(saved);
    },
  };
}

/** `startWorkerTestEnv` with the worker's base directory `baseDir` and its artifacts under `baseDir/artifacts`. */
export function startBaseDirWorkerEnv(taskQueue: string, baseDir: string): Promise<WorkerTestEnv> {
  return startWorkerTestEnv(taskQueue, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
}

/**
 * The whole pipeline on a config file (relative to the worker's base dir), started as a user's
 * `temporal workflow start --type pivotMiningWorkflow` starts it; resolves to the run's result.
 */
export function runPivotMining(
  client: Client,
  opts: { taskQueue: string; configPath: string; runId: string; workflowId?: string },
): Promise<PivotMiningResult> {
  return client.workflow.execute('pivotMiningWorkflow', {
    taskQueue: opts.taskQueue,
    workflowId: opts.workflowId ?? opts.runId,
    args: [{ config_path: opts.configPath, run_id: opts.runId }],
  }) as Promise<PivotMiningResult>;
}
