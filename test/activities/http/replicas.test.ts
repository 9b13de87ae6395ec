import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { closePools, postJson, RequestFailure } from '../../../activities/http/client';
import { modelEndpoint, replicaStats, type ReplicaStats } from '../../../activities/http/replicas';
import { withRetries } from '../../../activities/http/retry';
import { startFakeEngine, type FakeEngine } from './fakeEngine';

// An engine given as a list of replica URLs: requests spread by least outstanding within each
// replica's cap, a session stays on its replica, and a replica that fails is benched while its
// requests go to the others, without costing a rollout an attempt.

const PATH = '/v1/responses';
const engines: FakeEngine[] = [];
after(async () => {
  await closePools();
  await Promise.all(engines.map((e) => e.close().catch(() => undefined)));
});

async function twoEngines(): Promise<[FakeEngine, FakeEngine]> {
  const pair: [FakeEngine, FakeEngine] = [await startFakeEngine('a'), await startFakeEngine('b')];
  engines.push(...pair);
  return pair;
}

interface Answer {
  engine: string;
  id: string;
}

function endpointOver([a, b]: [FakeEngine, FakeEngine], cap: number, bench = { initialMs: 150, maxMs: 600 }) {
  const endpoint = modelEndpoint([a.url, b.url], PATH, cap, bench);
  const send = (id: string, opts: { rank?: number; affinity?: string; timeoutMs?: number } = {}) =>
    endpoint.run(
      (url) => postJson(url, { id }, { timeoutMs: opts.timeoutMs ?? 5_000, connections: cap }) as Promise<Answer>,
      opts,
    );
  return { endpoint, send };
}

const statsOf = (engine: FakeEngine): ReplicaStats => {
  const port = new URL(engine.url).port;
  const found = replicaStats().filter((s) => s.endpoint === `http://127.0.0.1:${port}`);
  assert.equal(found.length, 1, `one replica stats entry for ${engine.url}`);
  return found[0]!;
};

async function until(what: string, done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

test("requests spread by least outstanding, never past a replica's cap, oldest rank first across replicas", async () => {
  const [a, b] = await twoEngines();
  a.mode = b.mode = { kind: 'hold' };
  const { send } = endpointOver([a, b], 3);
  const first = ['r1', 'r2', 'r3', 'r4'].map((id) => send(id, { rank: 1 }));
  await until('four requests arrived', () => a.inFlight + b.inFlight === 4);
  assert.deepEqual([a.inFlight, b.inFlight], [2, 2], 'each request goes to the replica with fewer in flight');
  first.push(send('r5', { rank: 1 }), send('r6', { rank: 1 }));
  await until('both replicas hold three', () => a.inFlight === 3 && b.inFlight === 3);
  // Queued while every slot is taken, in an order the ranks reverse.
  const queued = [send('late', { rank: 9 }), send('early', { rank: 2 })];
  await sleep(30);
  assert.equal(a.received.length + b.received.length, 6, 'a full cap on both replicas holds the rest back');

  a.release(String(a.received[0]!.id));
  await until('a slot freed on a is taken', () => a.inFlight === 3);
  assert.equal(a.received.at(-1)!.id, 'early', 'the lowest rank goes first, on whichever replica frees a slot');
  b.release(String(b.received[0]!.id));
  await until('a slot freed on b is taken', () => b.inFlight === 3);
  assert.equal(b.received.at(-1)!.id, 'late');
  a.releaseAll();
  b.releaseAll();
  await Promise.all([...first, ...queued]);

  // A fast and a slow replica: each takes work as its slots free, so the fast one takes most. The
  // gap is wide (2 ms against 200 ms) so that a loaded host, which adds its own milliseconds to
  // every request, does not close it.
  a.mode = { kind: 'answer', delayMs: 2 };
  b.mode = { kind: 'answer', delayMs: 200 };
  const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => send(`s${i}`)));
  const onA = answers.filter((x) => x.engine === 'a').length;
  const onB = answers.length - onA;
  assert.ok(onA > 4 * onB && onB > 0, `fast replica took ${onA}, slow one ${onB}`);
  assert.equal(a.peak, 3);
  assert.equal(b.peak, 3);
});

test('a session stays on its replica while it is up, even with the other one idle, and moves when it is benched', async () => {
  const pair = await twoEngines();
  const [a, b] = pair;
  const { send } = endpointOver(pair, 1);
  const home = (await send('s-1', { affinity: 'session' })).engine === 'a' ? a : b;
  const other = home === a ? b : a;

  // Both replicas busy; then the other one frees its slot while the session's next turn waits.
  a.mode = b.mode = { kind: 'hold' };
  const busy = [send('h1'), send('h2')];
  await until('both replicas hold one', () => a.inFlight === 1 && b.inFlight === 1);
  const turn2 = send('s-2', { affinity: 'session' });
  other.releaseAll();
  await sleep(30);
  assert.equal(
    other.received.some((r) => r.id === 's-2'),
    false,
    'the session waits for its own replica',
  );
  other.mode = { kind: 'answer' };
  assert.equal((await send('free')).engine, other === a ? 'a' : 'b', 'the other replica had a free slot all along');
  home.mode = { kind: 'answer' };
  home.releaseAll();
  assert.equal((await turn2).engine, home === a ? 'a' : 'b');
  await Promise.all(busy);
  for (let turn = 3; turn <= 5; turn++)
    assert.equal((await send(`s-${turn}`, { affinity: 'session' })).engine, home === a ? 'a' : 'b');

  // Its replica gone: the next turn moves, and later turns stay where it moved to.
  await home.cutOff();
  for (let turn = 6; turn <= 8; turn++)
    assert.equal((await send(`s-${turn}`, { affinity: 'session' })).engine, other === a ? 'a' : 'b');
  await home.restore();
});

test('a replica cut off mid-run: its share moves to the other, no rollout is lost, and it returns after its bench once it is back', async () => {
  const pair = await twoEngines();
  const [a, b] = pair;
  a.mode = b.mode = { kind: 'answer', delayMs: 3 };
  const { send } = endpointOver(pair, 4);
  const failedAttempts: string[] = [];
  // One attempt per rollout: any failure the replicas do not absorb loses the rollout.
  const rollout = (id: string) =>
    withRetries(
      () => send(id, { affinity: id }),
      { maxAttempts: 1 },
      async ({ failure }) => void failedAttempts.push(`${id}: ${failure.message}`),
    );

  const results = Array.from({ length: 300 }, (_, i) => rollout(`r${i}`));
  await until('both replicas served a share', () => a.received.length > 30 && b.received.length > 30);
  await a.cutOff();
  const outcomes = await Promise.all(results);
  assert.deepEqual(failedAttempts, []);
  assert.ok(outcomes.every((o) => o.ok));
  const served = outcomes.map((o) => (o.ok ? o.value.id : ''));
  assert.deepEqual(new Set(served).size, 300);
  const afterCut = outcomes.slice(-100).map((o) => (o.ok ? o.value.engine : ''));
  assert.ok(
    afterCut.every((e) => e === 'b'),
    'the last rollouts all went to the replica still up',
  );
  const cut = statsOf(a);
  assert.equal(cut.benched, true);
  assert.ok((cut.failures.get('connection') ?? 0) > 0);

  // Back on its port: after its bench a probe reaches it, and once that is answered it takes a share again.
  await a.restore();
  const servedBy: string[] = [];
  const deadline = Date.now() + 5_000;
  while (!servedBy.slice(-20).includes('a')) {
    assert.ok(Date.now() < deadline, 'the replica never came back');
    const batch = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`back${servedBy.length + i}`)));
    servedBy.push(...batch.map((x) => x.engine));
  }
  await until('the replica is off the bench', () => !statsOf(a).benched);
  const spread = await Promise.all(Array.from({ length: 40 }, (_, i) => send(`spread${i}`)));
  assert.ok(spread.filter((x) => x.engine === 'a').length >= 10, 'the returned replica takes its share again');
});

test("5xx and a hanging replica are benched too; a 4xx is the request's own failure and is not moved", async () => {
  const pair = await twoEngines();
  const [a, b] = pair;
  const { send } = endpointOver(pair, 4);
  a.mode = { kind: 'status', status: 503 };
  const after503 = await Promise.all(Array.from({ length: 20 }, (_, i) => send(`x${i}`)));
  assert.ok(after503.every((x) => x.engine === 'b'));
  assert.ok((statsOf(a).failures.get('http_5xx') ?? 0) > 0);

  // Hanging: requests time out there and move; while benched and then probed it takes one at a time.
  await sleep(700);
  a.mode = { kind: 'hang' };
  const afterHang = await Promise.all(Array.from({ length: 20 }, (_, i) => send(`y${i}`, { timeoutMs: 200 })));
  assert.ok(afterHang.every((x) => x.engine === 'b'));
  assert.ok((statsOf(a).failures.get('timeout') ?? 0) >= 1);
  assert.ok(a.peak <= 4);

  await sleep(700);
  a.mode = { kind: 'status', status: 400 };
  b.mode = { kind: 'status', status: 400 };
  const refused = await send('bad').catch((err: unknown) => err);
  assert.ok(refused instanceof RequestFailure && refused.failureClass === 'http_4xx');
  assert.equal(
    a.received.filter((r) => r.id === 'bad').length + b.received.filter((r) => r.id === 'bad').length,
    1,
    'a 4xx is not tried on the other replica',
  );
});

test('a single URL keeps the plain per-endpoint limiter: no replica pool, no failover', async () => {
  const [a] = await twoEngines();
  const endpoint = modelEndpoint(a.url, PATH, 2);
  assert.deepEqual(endpoint.urls, [`${a.url}${PATH}`]);
  a.mode = { kind: 'status', status: 503 };
  const failed = await endpoint
    .run((url) => postJson(url, { id: 'one' }, { timeoutMs: 5_000 }))
    .catch((err: unknown) => err);
  assert.ok(failed instanceof RequestFailure && failed.failureClass === 'http_5xx');
  assert.equal(
    replicaStats().some((s) => s.endpoint === new URL(a.url).origin),
    false,
  );
});
