import { Client, Connection } from '@temporalio/client';
import { temporalTarget } from '../../workers/connection';

export async function connectClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  const target = temporalTarget();
  const connection = await Connection.connect(target.connectionOptions as Parameters<typeof Connection.connect>[0]);
  return { client: new Client({ connection, namespace: target.namespace }), close: () => connection.close() };
}
