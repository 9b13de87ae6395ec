import { Client, Connection } from '@temporalio/client';
import { temporalTarget } from '../workers/connection';

// The client finds Temporal exactly as the workers do (workers/connection.ts): TEMPORAL_* variables
// and the profiles of the Temporal config file, so whatever cluster a worker reaches, so does this.

export interface PivotMinerConnection {
  client: Client;
  address: string;
  namespace: string;
  close: () => Promise<void>;
}

/** Connects to the Temporal the environment names (address, namespace, TLS, API key, profile). */
export async function connectClient(): Promise<PivotMinerConnection> {
  const target = temporalTarget();
  const connection = await Connection.connect(target.connectionOptions as Parameters<typeof Connection.connect>[0]);
  return {
    client: new Client({ connection, namespace: target.namespace }),
    address: target.address,
    namespace: target.namespace,
    close: () => connection.close(),
  };
}
