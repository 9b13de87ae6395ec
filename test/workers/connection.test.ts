import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import { temporalTarget } from '../../workers/connection';

// temporalTarget() follows Temporal's standard environment configuration: TEMPORAL_* variables,
// a profile of a temporal.toml, and variables over the profile. No server is needed to check that.

let dir: string;
const saved = { ...process.env };

function setEnv(vars: Record<string, string>): void {
  for (const key of Object.keys(process.env))
    if (key.startsWith('TEMPORAL_') && key !== 'TEMPORAL_BIN') delete process.env[key];
  // A config file with an empty default profile, so a developer's ~/.config/temporalio/temporal.toml cannot leak in.
  process.env.TEMPORAL_CONFIG_FILE = path.join(dir, 'empty.toml');
  Object.assign(process.env, vars);
}

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-envconfig-'));
  writeFileSync(path.join(dir, 'empty.toml'), '[profile.default]\n');
  writeFileSync(path.join(dir, 'ca.pem'), 'CA PEM');
  writeFileSync(path.join(dir, 'client.pem'), 'CLIENT CERT PEM');
  writeFileSync(path.join(dir, 'client.key'), 'CLIENT KEY PEM');
  writeFileSync(
    path.join(dir, 'temporal.toml'),
    [
      '[profile.default]',
      'address = "localhost:7233"',
      '',
      '[profile.cloud]',
      'address = "my-ns.a1b2c.tmprl.cloud:7233"',
      'namespace = "my-ns.a1b2c"',
      'api_key = "profile-api-key"',
      '',
      '[profile.mtls]',
      'address = "temporal.internal:7233"',
      'namespace = "mining"',
      '[profile.mtls.tls]',
      `server_ca_cert_path = "${path.join(dir, 'ca.pem')}"`,
      `client_cert_path = "${path.join(dir, 'client.pem')}"`,
      `client_key_path = "${path.join(dir, 'client.key')}"`,
      'server_name = "temporal.internal"',
      '',
    ].join('\n'),
  );
});

afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
});

/** Certificates load as Buffer from variables and as Uint8Array from a profile. */
const text = (data: Uint8Array | undefined) => (data ? Buffer.from(data).toString() : undefined);

after(() => rmSync(dir, { recursive: true, force: true }));

test('defaults: a local dev server, namespace default, no TLS', () => {
  setEnv({});
  const target = temporalTarget();
  assert.equal(target.address, 'localhost:7233');
  assert.equal(target.namespace, 'default');
  assert.equal(target.connectionOptions.address, 'localhost:7233');
  assert.equal(target.connectionOptions.tls, undefined);
  assert.equal(target.connectionOptions.apiKey, undefined);
});

test('TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_API_KEY; an API key turns TLS on', () => {
  setEnv({
    TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'my-ns.a1b2c',
    TEMPORAL_API_KEY: 'env-api-key',
  });
  const target = temporalTarget();
  assert.equal(target.address, 'my-ns.a1b2c.tmprl.cloud:7233');
  assert.equal(target.namespace, 'my-ns.a1b2c');
  assert.equal(target.connectionOptions.apiKey, 'env-api-key');
  assert.equal(target.connectionOptions.tls, true);
});

test('TEMPORAL_TLS_* variables: server CA, client certificate pair (mTLS) and server name', () => {
  setEnv({
    TEMPORAL_ADDRESS: 'temporal.internal:7233',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
    TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
  });
  const tls = temporalTarget().connectionOptions.tls;
  assert.ok(tls && typeof tls === 'object');
  assert.equal(text(tls.serverRootCACertificate), 'CA PEM');
  assert.equal(text(tls.clientCertPair?.crt), 'CLIENT CERT PEM');
  assert.equal(text(tls.clientCertPair?.key), 'CLIENT KEY PEM');
  assert.equal(tls.serverNameOverride, 'temporal.internal');
});

test('TEMPORAL_TLS=false turns TLS off even with an API key', () => {
  setEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' });
  assert.equal(temporalTarget().connectionOptions.tls, false);
});

test('a TOML profile chosen by TEMPORAL_PROFILE: API key profile', () => {
  setEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'cloud' });
  const target = temporalTarget();
  assert.equal(target.address, 'my-ns.a1b2c.tmprl.cloud:7233');
  assert.equal(target.namespace, 'my-ns.a1b2c');
  assert.equal(target.connectionOptions.apiKey, 'profile-api-key');
  assert.equal(target.connectionOptions.tls, true);
});

test('a TOML profile with an mTLS table', () => {
  setEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'mtls' });
  const target = temporalTarget();
  assert.equal(target.address, 'temporal.internal:7233');
  assert.equal(target.namespace, 'mining');
  const tls = target.connectionOptions.tls;
  assert.ok(tls && typeof tls === 'object');
  assert.equal(text(tls.clientCertPair?.crt), 'CLIENT CERT PEM');
  assert.equal(text(tls.serverRootCACertificate), 'CA PEM');
  assert.equal(tls.serverNameOverride, 'temporal.internal');
});

test('variables override the profile they are combined with', () => {
  setEnv({
    TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml'),
    TEMPORAL_PROFILE: 'cloud',
    TEMPORAL_NAMESPACE: 'other-ns',
    TEMPORAL_API_KEY: 'rotated',
  });
  const target = temporalTarget();
  assert.equal(target.address, 'my-ns.a1b2c.tmprl.cloud:7233');
  assert.equal(target.namespace, 'other-ns');
  assert.equal(target.connectionOptions.apiKey, 'rotated');
});

test('the default profile of the file when TEMPORAL_PROFILE is unset; an unknown profile is an error', () => {
  setEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml') });
  assert.equal(temporalTarget().address, 'localhost:7233');
  setEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'nope' });
  assert.throws(() => temporalTarget(), /Profile 'nope' not found/);
});
