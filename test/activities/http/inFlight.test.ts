import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { closePools, postJson, RequestFailure } from '../../../activities/http/client';
import {
  countRequestsInFlight,
  endpointLabel,
  inFlightCount,
  requestsInFlight,
} from '../../../activities/http/inFlight';

// The worker's requests-in-flight gauge reads these counts; a label is scraped by whoever can
// reach the metrics port, so it must never carry what a URL may hide a key in.

const held: ServerResponse[] = [];
const server = createServer((req, res) => {
  req.resume();
  if (req.url?.startsWith('/fail')) res.writeHead(500).end('{}');
  else held.push(res);
});
let base: string;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await closePools();
  server.close();
});

const inFlightNow = () => Object.fromEntries([...requestsInFlight()].map((e) => [e.endpoint, e.count]));

test('labels are scheme://host:port/path, without credentials, query or fragment', () => {
  assert.equal(
    endpointLabel('http://user:s3cret@10.0.0.5:8000/v1/responses?api_key=s3cret#x'),
    'http://10.0.0.5:8000/v1/responses',
  );
  assert.equal(
    endpointLabel('https://models.example.com/v1/chat/completions'),
    'https://models.example.com:443/v1/chat/completions',
  );
  assert.equal(endpointLabel('http://[::1]/run'), 'http://[::1]:80/run');
});

test('nothing is counted until a worker turns counting on', async () => {
  held.length = 0;
  const request = postJson(`${base}/run`, {}, { timeoutMs: 5_000 });
  while (held.length < 1) await sleep(5);
  assert.equal(inFlightCount(`${base}/run`), undefined);
  assert.deepEqual(inFlightNow(), {});
  held.splice(0).forEach((res) => res.end('{}'));
  await request;
});

test('counts requests while they are in flight, per endpoint, and releases them however they end', async () => {
  countRequestsInFlight();
  const ok = [
    postJson(`${base}/run?token=a`, {}, { timeoutMs: 5_000 }),
    postJson(`${base}/run?token=b`, {}, { timeoutMs: 5_000 }),
    postJson(`${base}/v1/responses`, {}, { timeoutMs: 5_000 }),
  ];
  while (held.length < 3) await sleep(5);
  assert.deepEqual(inFlightNow(), { [`${base}/run`]: 2, [`${base}/v1/responses`]: 1 });

  const failed = postJson(`${base}/fail`, {}, { timeoutMs: 5_000 });
  await assert.rejects(failed, (err) => err instanceof RequestFailure && err.failureClass === 'http_5xx');
  held.splice(0).forEach((res) => res.end('{}'));
  await Promise.all(ok);
  assert.deepEqual(inFlightNow(), { [`${base}/run`]: 0, [`${base}/v1/responses`]: 0, [`${base}/fail`]: 0 });
});
