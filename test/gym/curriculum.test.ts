import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PivotUnion, retirements, topUp } from '../../gym/curriculum';
import { pivotKey } from '../../gym/pivotIdentity';
import { classifyLocalProfile, type LocalProfileStats } from '../../gym/selection';

const pivot = (n: number) => ({
  responses_create_params: { input: [{ role: 'user', content: `task ${n}` }] },
  expected_action: { type: 'function_call', name: 'f', arguments: `{"n": ${n}}` },
  provenance: { uuid: `uuid-${n}` },
});

function stats(taskIndex: number, rewards: number[], expected = rewards.length): LocalProfileStats {
  return {
    task_index: taskIndex,
    pass_rate: rewards.reduce((a, b) => a + b, 0) / rewards.length,
    min_reward: Math.min(...rewards),
    max_reward: Math.max(...rewards),
    num_samples: rewards.length,
    expected_num_samples: expected,
    missing_num_samples: expected - rewards.length,
  };
}

test('retirement follows the publish classification: all-pass learned, all-fail unsolvable, mixed kept', () => {
  const pool = [pivot(0), pivot(1), pivot(2)];
  const profiles = new Map([
    [0, stats(0, [1, 1, 1, 1])],
    [1, stats(1, [0, 0, 0, 0])],
    [2, stats(2, [1, 0, 1, 0])],
  ]);
  const retired = retirements(pool, profiles, false, 3);
  assert.deepEqual(
    retired.map((r) => [r.uuid, r.reason, r.round, r.key]),
    [
      ['uuid-0', 'learned', 3, pivotKey(pool[0]!)],
      ['uuid-1', 'unsolvable', 3, pivotKey(pool[1]!)],
    ],
  );
});

test('a partial profile with mean 1 is incomplete for publish and therefore not retired as learned', () => {
  // 2 of 4 samples completed, both passed: mean 1, but the profile is partial.
  const partial = stats(0, [1, 1], 4);
  assert.equal(partial.pass_rate, 1);
  assert.equal(classifyLocalProfile(partial, false), 'incomplete');
  assert.deepEqual(retirements([pivot(0)], new Map([[0, partial]]), false, 1), []);
  // With allow_partial the same profile is all-pass in both places.
  assert.equal(classifyLocalProfile(partial, true), 'all_pass');
  assert.equal(retirements([pivot(0)], new Map([[0, partial]]), true, 1)[0]?.reason, 'learned');
});

test('a pivot without a profile row is never retired', () => {
  assert.deepEqual(retirements([pivot(0)], new Map(), false, 1), []);
});

test('topUp fills to the target in supply order, skipping pool members and retired keys', () => {
  const pool = [pivot(0)];
  const supply = [pivot(0), pivot(1), pivot(2), pivot(3), pivot(4)];
  const added = topUp(pool, supply, 3, [pivotKey(pivot(1))]);
  assert.deepEqual(
    added.map((r) => r.provenance),
    [{ uuid: 'uuid-2' }, { uuid: 'uuid-3' }],
  );
  assert.deepEqual(topUp(pool, supply, 1, []), []);
});

test('PivotUnion admits each pivot once, whatever its provenance', () => {
  const union = new PivotUnion([pivotKey(pivot(1))]);
  const relabelled = { ...pivot(1), provenance: { uuid: 'other' } };
  assert.equal(union.has(relabelled), true);
  assert.equal(union.admit(relabelled), false);
  assert.equal(union.admit(pivot(2)), true);
  assert.equal(union.admit({ ...pivot(2), agent_ref: { name: 'x' } }), false);
  assert.equal(union.admit(pivot(3)), true);
});
