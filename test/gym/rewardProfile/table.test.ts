import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachStat, RolloutTable } from '../../../gym/rewardProfile/table';
import { random } from '../../helpers/random';

test('rollout_infos entries keep what the stats columns do not: top-level over usage, reward as written', () => {
  const table = new RolloutTable();
  const i = table.add(2, 1, { reward: true, ok: 3, response: { usage: { ok: 5, tokens: 9 } } });
  const j = table.add(2, 0, { reward: 0.5, response: { usage: { tokens: 4 } } });
  assert.deepEqual(table.rolloutInfo(i), {
    rollout_id: '2:1',
    _ng_task_index: 2,
    _ng_rollout_index: 1,
    reward: true,
    ok: 3,
    tokens: 9,
  });
  assert.deepEqual(table.rolloutInfo(j), {
    rollout_id: '2:0',
    _ng_task_index: 2,
    _ng_rollout_index: 0,
    reward: 0.5,
    tokens: 4,
  });
  assert.equal(table.stats.get('ok')!.get(i), 5);
  assert.equal(table.stats.get('reward')!.get(i), 1);
  assert.deepEqual([...table.keyOrder()], [j, i]);
});

test('rows added in key order keep their order, and one added out of order sorts them again', () => {
  const table = new RolloutTable();
  for (const [task, rollout] of [
    [0, 0],
    [0, 1],
    [3, 0],
  ] as const)
    table.add(task, rollout, { response: {} });
  const other = new RolloutTable();
  other.add(7, 0, { response: {} });
  assert.deepEqual([...table.keyOrder()], [0, 1, 2]);
  assert.deepEqual([...other.keyOrder()], [0]);
  table.add(1, 5, { response: {} });
  assert.deepEqual([...table.keyOrder()], [0, 1, 3, 2]);
  assert.equal(table.firstOfTask(1), 3);
  assert.deepEqual([...other.keyOrder()], [0]);
});

test("forEachStat visits `result | usage` in the merged object's order, integer-like keys included", () => {
  const next = random(11);
  const keys = ['reward', 'input_tokens', 'ok', '2', '10', 'x', '_ng_task_index', 'agent_name', 'total_tokens'];
  const values = [1, 0.5, true, false, 'text', null, [1], { a: 1 }, 7];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  for (let trial = 0; trial < 500; trial++) {
    const object = () =>
      Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, () => [pick(keys), pick(values)]));
    const usage = next() < 0.2 ? null : object();
    const result = { ...object(), response: { usage } };
    const visited: [string, number][] = [];
    forEachStat(result, (k, n) => visited.push([k, n]));
    const expected = Object.entries({ ...result, ...(usage ?? {}) })
      .filter(
        ([k, v]) =>
          (typeof v === 'number' || typeof v === 'boolean') &&
          !['_ng_task_index', '_ng_rollout_index', 'agent_name'].includes(k),
      )
      .map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]);
    assert.deepEqual(visited, expected, JSON.stringify(result));
  }
});
