import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../contracts/temporal';

// One way to find Temporal for every process (worker, CLI, the importable client, tests): the
// standard environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS
// settings, or a profile in the Temporal config file), so a dev server, a self-hosted cluster and
// Temporal Cloud differ only in environment.

/** The workers' task queue: PIVOT_MINER_TASK_QUEUE, read when called so a library user may set it late. */
export function taskQueueFromEnv(): string {
  return process.env.PIVOT_MINER_TASK_QUEUE || DEFAULT_TASK_QUEUE;
}

export const TASK_QUEUE = taskQueueFromEnv();

export interface TemporalTarget {
  address: string;
  namespace: string;
  connectionOptions: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
}

export function temporalTarget(): TemporalTarget {
  const { connectionOptions, namespace } = loadClientConnectConfig();
  const address = connectionOptions.address ?? 'localhost:7233';
  return { address, namespace: namespace ?? 'default', connectionOptions: { ...connectionOptions, address } };
}
