import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../contracts/temporal';

// One way to find Temporal for every process (worker, CLI, tests): the standard environment
// configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS settings, or a profile
// in the Temporal config file), so a dev server, a self-hosted cluster and Temporal Cloud differ
// only in environment.

export const TASK_QUEUE = process.env.PIVOT_MINER_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;

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
