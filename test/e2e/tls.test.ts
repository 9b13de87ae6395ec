import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { temporalTarget } from '../../workers/connection';
import { startTestTemporal } from '../helpers/temporal';
import { makeTestCa } from '../helpers/testCa';

// The Temporal CLI dev server has no TLS flags, so TLS is terminated by a Node TLS front door
// (certificates made with openssl) that forwards the bytes to the dev server. The worker's
// connection, configured only through TEMPORAL_TLS_* variables, must complete TLS and mTLS handshakes.

let dir: string;
let env: TestWorkflowEnvironment;
const servers: tls.Server[] = [];
const saved = { ...process.env };

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-tls-'));
  makeTestCa(dir, [
    { name: 'server', cn: 'temporal.test', usage: 'serverAuth' },
    { name: 'client', cn: 'pivot-worker', usage: 'clientAuth' },
  ]);
  env = await startTestTemporal();
});

after(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

async function tlsFrontDoor(opts: { requireClientCert: boolean }): Promise<number> {
  const [host, port] = env.address.split(':') as [string, string];
  const server = tls.createServer(
    {
      key: readFileSync(path.join(dir, 'server.key')),
      cert: readFileSync(path.join(dir, 'server.pem')),
      ALPNProtocols: ['h2'],
      requestCert: opts.requireClientCert,
      rejectUnauthorized: opts.requireClientCert,
      ca: opts.requireClientCert ? [readFileSync(path.join(dir, 'ca.pem'))] : undefined,
    },
    (socket) => {
      const upstream = net.connect(Number(port), host === 'localhost' ? '127.0.0.1' : host);
      socket.pipe(upstream).pipe(socket);
      const destroy = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', destroy);
      upstream.on('error', destroy);
    },
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

async function describeNamespaceVia(vars: Record<string, string>): Promise<string> {
  for (const key of Object.keys(process.env))
    if (key.startsWith('TEMPORAL_') && key !== 'TEMPORAL_BIN') delete process.env[key];
  Object.assign(process.env, vars);
  const target = temporalTarget();
  const connection = await NativeConnection.connect(target.connectionOptions);
  try {
    const reply = await connection.workflowService.describeNamespace({ namespace: target.namespace });
    return reply.namespaceInfo?.name ?? '';
  } finally {
    await connection.close();
  }
}

test('TLS: server CA and server name from TEMPORAL_TLS_* variables', { timeout: 120_000 }, async () => {
  const port = await tlsFrontDoor({ requireClientCert: false });
  const name = await describeNamespaceVia({
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  });
  assert.equal(name, 'default');
});

test(
  'mTLS: the client certificate pair from TEMPORAL_TLS_* variables is presented and required',
  { timeout: 120_000 },
  async () => {
    const port = await tlsFrontDoor({ requireClientCert: true });
    const vars = {
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    };
    const name = await describeNamespaceVia({
      ...vars,
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
    });
    assert.equal(name, 'default');
    await assert.rejects(describeNamespaceVia(vars));
  },
);
