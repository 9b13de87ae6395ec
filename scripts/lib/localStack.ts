import { NativeConnection, type Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../../activities';
import { createHostWorker, createPivotWorker, releaseWorkerResources } from '../../workers/pivotWorker';
import { installWorkerRuntime } from '../../workers/runtime';
import { ensureDevServer, type DevServerHandle } from './devServer';

// The whole local stack in one process for `demo` and `dev`: the Temporal dev server (reused if
// one is already running), a worker, and through the worker the embedded simulators.

export interface LocalStack {
  devServer: DevServerHandle;
  worker: Worker;
  shutdown(): Promise<void>;
}

export async function startLocalStack(opts: { port?: number; activityDeps?: ActivityDeps } = {}): Promise<LocalStack> {
  const devServer = await ensureDevServer({ port: opts.port ?? Number(process.env.PIVOT_MINER_DEV_PORT ?? 7233) });
  process.env.TEMPORAL_ADDRESS = devServer.address;
  installWorkerRuntime();
  const connection = await NativeConnection.connect({ address: devServer.address });
  const worker = await createPivotWorker({ connection, activityDeps: opts.activityDeps });
  const hostWorker = await createHostWorker({ connection });
  const hostWorkerDone = hostWorker.run();
  let stopped = false;
  return {
    devServer,
    worker,
    async shutdown() {
      if (stopped) return;
      stopped = true;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      if (hostWorker.getState() === 'RUNNING') hostWorker.shutdown();
      await hostWorkerDone.catch(() => undefined);
      await releaseWorkerResources();
      await connection.close().catch(() => undefined);
      await devServer.stop();
    },
  };
}
