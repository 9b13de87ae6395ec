import { NativeConnection } from '@temporalio/worker';
import { temporalTarget } from './connection';
import { runPivotWorker } from './pivotWorker';

// Entry point of a standalone worker process (`npx pivot-miner worker`, or `npx tsx workers/main.ts`).
export async function main(): Promise<void> {
  const target = temporalTarget();
  const connection = await NativeConnection.connect(target.connectionOptions);
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
