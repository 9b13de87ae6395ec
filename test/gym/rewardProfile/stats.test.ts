import assert from 'node:assert/strict';
import { test } from 'node:test';
import { profileFromData } from '../../../gym/rewardProfile';
import { pairwiseSum } from '../../../gym/rewardProfile/stats';

test('stats reproduce numpy/pandas to the last bit', () => {
  // Reference values computed with numpy 2.4 / pandas 3.1 (pairwise summation differs from naive here).
  const a = Array.from({ length: 299 }, (_, i) => 0.1 * (i + 1) + 0.01);
  assert.equal(pairwiseSum(a), 4487.99);
  const b = Array.from({ length: 19 }, (_, i) => (i % 3 === 0 ? undefined : 0.1 * (i + 1) + 0.01));
  const rows = b.map((_, i) => ({ _ng_task_index: 0, _ng_rollout_index: i, agent_ref: { name: 'a' } }));
  const results = b.map((v, i) => ({
    _ng_task_index: 0,
    _ng_rollout_index: i,
    response: {},
    ...(v === undefined ? {} : { v }),
    reward: 1,
  }));
  const g = profileFromData(rows, results, false).groupLevel[0]!;
  assert.equal(g['mean/v'], 1.0100000000000002);
  assert.equal(g['std/v'], 0.5376717484589544);
  assert.equal(g['median/v'], 1.01);
});
