import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { closePools, postJsonText, RequestFailure, type FailureClass } from '../../../activities/http/client';
import { freePort } from '../../../scripts/lib/net';

// The one HTTP client every model, agent and resources call goes through: what each answer is
// classified as, since that decides retries and what the failures sidecar says.

type Route = (req: IncomingMessage, body: string, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => routes.get(req.url!)!(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await closePools();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function route(path: string, handler: Route): string {
  routes.set(path, handler);
  return `${base}${path}`;
}

async function failure(promise: Promise<unknown>): Promise<RequestFailure> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RequestFailure, String(err));
    return err;
  }
  assert.fail('expected a RequestFailure');
}

function assertClass(err: RequestFailure, failureClass: FailureClass, retryable: boolean): void {
  assert.equal(err.failureClass, failureClass, err.message);
  assert.equal(err.retryable, retryable);
}

const opts = { timeoutMs: 5000 };

test("a 200 answer is parsed, with the caller's parser when given, and the body arrives as sent", async () => {
  const url = route('/echo', (req, body, res) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ body, type: req.headers['content-type'] })),
  );
  assert.deepEqual(await postJsonText(url, '{"a":1.0}', opts), { body: '{"a":1.0}', type: 'application/json' });
  assert.equal(
    await postJsonText(url, '{}', { ...opts, parse: (t) => t.length }),
    JSON.stringify({ body: '{}', type: 'application/json' }).length,
  );
});

test('a body arriving in many pieces, with characters split between them, reads whole; a byte-order mark is dropped', async () => {
  const text = JSON.stringify({ s: 'é😀'.repeat(100_000) });
  const bytes = Buffer.from(`\ufeff${text}`, 'utf8');
  const url = route('/pieces', (_req, _body, res) => {
    res.writeHead(200);
    // Odd-sized writes split multi-byte characters between chunks.
    for (let at = 0; at < bytes.length; at += 4093) res.write(bytes.subarray(at, at + 4093));
    res.end();
  });
  assert.equal(await postJsonText(url, '{}', { ...opts, parse: (t) => t }), text);
});

test('a streamed request body arrives as its pieces joined', async () => {
  const url = route('/stream', (_req, body, res) => res.writeHead(200).end(JSON.stringify(body)));
  async function* pieces() {
    yield '{"verify_responses":[';
    yield '{"reward":1.0}';
    yield ']}';
  }
  assert.equal(await postJsonText(url, pieces, opts), '{"verify_responses":[{"reward":1.0}]}');
});

test('429 and 5xx are retried (with Retry-After), other 4xx and a 200 that is not JSON are classified', async () => {
  const busy = route('/busy', (_req, _body, res) => res.writeHead(429, { 'Retry-After': '2' }).end('slow down'));
  const err429 = await failure(postJsonText(busy, '{}', opts));
  assertClass(err429, 'http_429', true);
  assert.equal(err429.retryAfterMs, 2000);

  const down = route('/down', (_req, _body, res) => res.writeHead(503).end('upstream gone'));
  const err5xx = await failure(postJsonText(down, '{}', opts));
  assertClass(err5xx, 'http_5xx', true);
  assert.match(err5xx.message, /answered 503: upstream gone/);
  assert.equal(err5xx.retryAfterMs, undefined);

  const missing = route('/missing', (_req, _body, res) => res.writeHead(404).end('no such route'));
  assertClass(await failure(postJsonText(missing, '{}', opts)), 'http_4xx', false);

  const torn = route('/torn', (_req, _body, res) => res.writeHead(200).end('{"resp'));
  const errTorn = await failure(postJsonText(torn, '{}', opts));
  assertClass(errTorn, 'invalid_response', true);
  assert.match(errTorn.message, /not JSON: \{"resp/);
});

test('no answer within the timeout, before the headers or during the body, is a timeout', async () => {
  const silent = route('/silent', () => undefined);
  assertClass(await failure(postJsonText(silent, '{}', { timeoutMs: 300 })), 'timeout', true);
  const stalled = route('/stalled', (_req, _body, res) => {
    res.writeHead(200);
    res.write('{"a":');
  });
  assertClass(await failure(postJsonText(stalled, '{}', { timeoutMs: 300 })), 'timeout', true);
});

test("the caller's abort cancels a request in flight, and one aborted before it starts", async () => {
  const silent = route('/held', () => undefined);
  const controller = new AbortController();
  const pending = postJsonText(silent, '{}', { ...opts, signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  assertClass(await failure(pending), 'cancelled', false);
  assertClass(await failure(postJsonText(silent, '{}', { ...opts, signal: AbortSignal.abort() })), 'cancelled', false);
});

test('a refused connection is a retryable connection failure', async () => {
  const err = await failure(postJsonText(`http://127.0.0.1:${await freePort()}/run`, '{}', opts));
  assertClass(err, 'connection', true);
  assert.match(err.message, /ECONNREFUSED/);
});
