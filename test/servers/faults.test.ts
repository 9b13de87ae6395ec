import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postJson, RequestFailure } from '../../activities/http/client';
import { FaultPlan, startFaultFront } from '../../servers/faults';
import { serverFaultsSchema, type FaultKind } from '../../contracts/faultsConfig';
import { listenJson } from '../../servers/http';

// Each injected fault kind must reach the pipeline's HTTP client as the failure class the failures
// sidecar records for it; decisions must be reproducible from the seed.

async function classOf(url: string, body: unknown, timeoutMs = 2_000): Promise<string> {
  try {
    await postJson(url, body, { timeoutMs });
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof RequestFailure, String(err));
    return err.failureClass;
  }
}

test('every fault kind reaches the client as its failure class, then the request succeeds', async () => {
  const upstream = await listenJson({
    host: '127.0.0.1',
    port: 0,
    handler: (r) => ({ body: { echo: r.body, pad: 'x'.repeat(64) } }),
  });
  const kinds: FaultKind[] = ['http_5xx', 'http_429', 'hang', 'torn_json', 'reset', 'slow'];
  const faults = serverFaultsSchema.parse({
    hang_ms: 10_000,
    slow_ms: 50,
    rules: kinds.map((kind, i) => ({ match: { _ng_task_index: i }, kind, times: 1 })),
  });
  const front = await startFaultFront({ server: 'agent', upstreamUrl: upstream.url, faults, seed: 1 });
  try {
    const url = `${front.url}/run`;
    const seen: Record<string, string[]> = {};
    for (const [i, kind] of kinds.entries()) {
      const row = { _ng_task_index: i, _ng_rollout_index: 0 };
      seen[kind] = [await classOf(url, row, kind === 'hang' ? 500 : 2_000), await classOf(url, row)];
    }
    assert.deepEqual(seen, {
      http_5xx: ['http_5xx', 'ok'],
      http_429: ['http_429', 'ok'],
      hang: ['timeout', 'ok'],
      torn_json: ['invalid_response', 'ok'],
      reset: ['connection', 'ok'],
      slow: ['ok', 'ok'],
    });
    const counts = JSON.parse(await (await fetch(`${front.url}/_faults`)).text());
    assert.deepEqual(counts, {
      server: 'agent',
      requests: 12,
      injected: { http_5xx: 1, http_429: 1, hang: 1, torn_json: 1, reset: 1, slow: 1 },
    });
  } finally {
    await front.close();
    await upstream.close();
  }
});

test('a rule without `times` always fails; 429 and 503 carry Retry-After when configured', async () => {
  const upstream = await listenJson({ host: '127.0.0.1', port: 0, handler: () => ({ body: { ok: true } }) });
  const faults = serverFaultsSchema.parse({
    retry_after_s: 2,
    rules: [{ match: { _ng_task_index: 3, _ng_rollout_index: 1 } }],
  });
  const front = await startFaultFront({ server: 'agent', upstreamUrl: upstream.url, faults, seed: 1 });
  try {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${front.url}/run`, {
        method: 'POST',
        body: JSON.stringify({ _ng_task_index: 3, _ng_rollout_index: 1 }),
      });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '2');
      await res.arrayBuffer();
    }
    assert.equal(await classOf(`${front.url}/run`, { _ng_task_index: 3, _ng_rollout_index: 0 }), 'ok');
  } finally {
    await front.close();
    await upstream.close();
  }
});

test('random faults are seeded and capped per request key', () => {
  const faults = serverFaultsSchema.parse({ rate: 0.3, max_faults_per_request: 1 });
  const run = (seed: number) => {
    const plan = new FaultPlan('model', faults, seed);
    const out: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      for (let k = 0; k < 200; k++) out.push(plan.decide(`k${k}`, {})?.kind ?? '-');
    }
    return out;
  };
  const a = run(5);
  assert.deepEqual(a, run(5));
  assert.notDeepEqual(a, run(6));
  const faulted = a.filter((k) => k !== '-').length;
  assert.ok(faulted > 20 && faulted < 200, `faulted ${faulted}`);
  // No key is faulted twice: the second and third passes only fault keys the first pass spared.
  const perKey = new Map<number, number>();
  a.forEach((kind, i) => kind !== '-' && perKey.set(i % 200, (perKey.get(i % 200) ?? 0) + 1));
  assert.ok([...perKey.values()].every((n) => n === 1));
});

test('5xx bursts fail a run of consecutive requests', () => {
  const plan = new FaultPlan('agent', serverFaultsSchema.parse({ burst_5xx: { every: 10, length: 3 } }), 0);
  const kinds = Array.from({ length: 20 }, (_, i) => plan.decide(`k${i}`, {})?.kind ?? '-');
  assert.deepEqual(
    kinds.map((k, i) => (k === 'http_5xx' ? i : -1)).filter((i) => i >= 0),
    [7, 8, 9, 17, 18, 19],
  );
});
