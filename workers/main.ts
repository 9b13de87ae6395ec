import { setTimeout as sleep } from 'node:timers/promises';
import { NativeConnection } from '@temporalio/worker';
import { temporalTarget } from './connection';
import { metricsBindAddress, type MetricsFlags } from './metrics';
import { installWorkerRuntime } from './runtime';
import { runPivotWorker } from './pivotWorker';

/**
 * Workers are restarted by supervisors while the Temporal server itself may be restarting, so a
 * refused connection is retried with backoff for a while instead of ending the process at once.
 */
async function connectWithRetry(
  options: Parameters<typeof NativeConnection.connect>[0],
  address: string,
): Promise<NativeConnection> {
  const deadline = Date.now() + Number(process.env.PIVOT_MINER_CONNECT_TIMEOUT_S ?? 60) * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await NativeConnection.connect(options);
    } catch (err) {
      if (Date.now() + delay > deadline) throw err;
      console.error(
        `pivot-miner worker: cannot reach Temporal at ${address} yet (${(err as Error).message.split('\n')[0]}); retrying`,
      );
      await sleep(delay);
    }
  }
}

// Entry point of a standalone worker process (`npx pivot-miner worker`, or `npx tsx workers/main.ts`).
export async function main(flags: MetricsFlags = {}): Promise<void> {
  const target = temporalTarget();
  const metricsAddress = metricsBindAddress(flags);
  installWorkerRuntime({ metricsAddress });
  if (metricsAddress) {
    console.log(`pivot-miner worker: Prometheus metrics on http://${metricsAddress}/metrics`);
  }
  const connection = await connectWithRetry(target.connectionOptions, target.address);
  try {
    console.log(`pivot-miner worker: ${target.address} namespace=${target.namespace}`);
    await runPivotWorker({ connection, namespace: target.namespace });
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
