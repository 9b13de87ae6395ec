import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectClient } from '../../client';
import { startApiKeyFrontDoor, type ApiKeyFrontDoor } from '../helpers/apiKeyFrontDoor';
import { startTestTemporal } from '../helpers/temporal';
import { makeTestCa } from '../helpers/testCa';

// connectClient() reaches a server that requires an API key over TLS, configured only by the
// variables a worker reads (TEMPORAL_ADDRESS, TEMPORAL_API_KEY, TEMPORAL_TLS_*), and is refused
// without the right key: the front door before the dev server checks it as Temporal Cloud does.

const API_KEY = 'pivot-miner-test-api-key';
const saved = { ...process.env };
let dir: string;
let env: TestWorkflowEnvironment;
let door: ApiKeyFrontDoor;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-api-key-'));
  makeTestCa(dir, [{ name: 'server', cn: 'temporal.test', usage: 'serverAuth' }]);
  writeFileSync(path.join(dir, 'empty.toml'), '[profile.default]\n');
  env = await startTestTemporal();
  door = await startApiKeyFrontDoor({
    upstream: env.address,
    apiKey: API_KEY,
    key: readFileSync(path.join(dir, 'server.key')),
    cert: readFileSync(path.join(dir, 'server.pem')),
  });
});

afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

after(async () => {
  await door?.close();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** The worker's variables for the front door, with `apiKey`; nothing else of TEMPORAL_* leaks in. */
function useFrontDoor(apiKey: string): void {
  for (const key of Object.keys(process.env))
    if (key.startsWith('TEMPORAL_') && key !== 'TEMPORAL_BIN') delete process.env[key];
  Object.assign(process.env, {
    TEMPORAL_CONFIG_FILE: path.join(dir, 'empty.toml'),
    TEMPORAL_ADDRESS: door.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    TEMPORAL_API_KEY: apiKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  });
}

test('with the API key, the client reaches the namespace through TLS', { timeout: 60_000 }, async () => {
  useFrontDoor(API_KEY);
  const before = door.counts.forwarded;
  const { client, namespace, close } = await connectClient();
  try {
    const reply = await client.workflowService.describeNamespace({ namespace });
    assert.equal(reply.namespaceInfo?.name, env.namespace ?? 'default');
  } finally {
    await close();
  }
  assert.ok(door.counts.forwarded > before, 'nothing went through the front door');
});

test('with a wrong API key, the server refuses the client', { timeout: 60_000 }, async () => {
  useFrontDoor('not-the-key');
  const before = door.counts.refused;
  await assert.rejects(
    async () => {
      const { client, namespace, close } = await connectClient();
      try {
        await client.workflowService.describeNamespace({ namespace });
      } finally {
        await close();
      }
    },
    (err: Error) => {
      // Connection.connect wraps the refused call (UNAUTHENTICATED) in its own ServiceError.
      assert.match(`${err.message}: ${String(err.cause)}`, /missing or wrong API key/);
      return true;
    },
  );
  assert.ok(door.counts.refused > before);
});
