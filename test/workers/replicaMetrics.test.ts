import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestFailure } from '../../activities/http/client';
import { ReplicaPool } from '../../activities/http/replicas';
import { replicaMetricsSampler } from '../../workers/metrics';

// A model served as replicas shows one series per replica on the worker's /metrics, labelled with
// the replica's host:port and its place in the config's list; counters grow by what happened since
// the last sample.

interface Recorded {
  name: string;
  value: number;
  tags: Record<string, string>;
}

function recordingMeter() {
  const recorded: Recorded[] = [];
  const metric = (name: string) => ({
    set: (value: number, tags: Record<string, string> = {}) => void recorded.push({ name, value, tags }),
    add: (value: number, tags: Record<string, string> = {}) => void recorded.push({ name, value, tags }),
  });
  const meter = { createGauge: (name: string) => metric(name), createCounter: (name: string) => metric(name) };
  return { meter: meter as unknown as Parameters<typeof replicaMetricsSampler>[0], recorded };
}

test('per-replica series carry endpoint and replica labels; counters add what happened since the last sample', async () => {
  const pool = new ReplicaPool(['http://10.0.0.1:8000', 'http://10.0.0.2:8000'], 4, {
    initialMs: 60_000,
    maxMs: 60_000,
  });
  const { meter, recorded } = recordingMeter();
  const sample = replicaMetricsSampler(meter, () => pool.stats());

  // The first request lands on replica 0, fails with a refused connection and moves to replica 1.
  const calls: number[] = [];
  await pool.run(async (replica) => {
    calls.push(replica);
    if (replica === 0) throw new RequestFailure('connection', 'refused', true);
    return 'ok';
  });
  assert.deepEqual(calls, [0, 1]);
  sample();
  const byName = (name: string) => recorded.filter((r) => r.name === name);
  const zero = { endpoint: 'http://10.0.0.1:8000', replica: '0' };
  const one = { endpoint: 'http://10.0.0.2:8000', replica: '1' };
  assert.deepEqual(byName('pivot_miner_replica_benched'), [
    { name: 'pivot_miner_replica_benched', value: 1, tags: zero },
    { name: 'pivot_miner_replica_benched', value: 0, tags: one },
  ]);
  assert.deepEqual(
    byName('pivot_miner_replica_requests_in_flight').map((r) => r.tags),
    [zero, one],
  );
  assert.deepEqual(byName('pivot_miner_replica_requests'), [
    { name: 'pivot_miner_replica_requests', value: 1, tags: zero },
    { name: 'pivot_miner_replica_requests', value: 1, tags: one },
  ]);
  assert.deepEqual(byName('pivot_miner_replica_failures'), [
    { name: 'pivot_miner_replica_failures', value: 1, tags: { ...zero, class: 'connection' } },
  ]);

  // Two more answered by replica 1 (0 is benched): the next sample adds 2 there and nothing else.
  recorded.length = 0;
  await pool.run(async () => 'ok');
  await pool.run(async () => 'ok');
  sample();
  assert.deepEqual(byName('pivot_miner_replica_requests'), [
    { name: 'pivot_miner_replica_requests', value: 2, tags: one },
  ]);
  assert.deepEqual(byName('pivot_miner_replica_failures'), []);
});
