import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { ephemeralPortRange, freePortInRange } from '../../../scripts/lib/net';

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

test('ephemeralPortRange is a range of unprivileged ports', () => {
  const { low, high } = ephemeralPortRange();
  assert.ok(1024 <= low && low < high && high <= 65535, `${low}-${high}`);
});

test('freePortInRange gives a port inside the range that a server can then listen on', async () => {
  const port = await freePortInRange(20_001, 32_000);
  assert.ok(port >= 20_001 && port <= 32_000, String(port));
  const server = await listenOn(port);
  await new Promise((resolve) => server.close(resolve));
});

test('freePortInRange never gives a port another listener holds', async () => {
  const held = await listenOn(await freePortInRange(20_001, 32_000));
  const { port } = held.address() as net.AddressInfo;
  try {
    await assert.rejects(freePortInRange(port, port, 5), new RegExp(`no free port in ${port}-${port} after 5 tries`));
  } finally {
    await new Promise((resolve) => held.close(resolve));
  }
});
