import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationSplit, type TrajectoryRef } from '../../gym/validationSplit';

const trajectories: TrajectoryRef[] = Array.from({ length: 400 }, (_, i) => ({
  source_file: i < 200 ? 'rollouts.jsonl' : 'more/rollouts.jsonl',
  task_index: Math.floor(i / 8) % 25,
  rollout_index: i % 8,
}));

test('about the fraction of trajectories go to validation, and the same seed gives the same sides', () => {
  const sides = (seed: number, order: TrajectoryRef[]) => {
    const split = new ValidationSplit({ fraction: 0.25, seed });
    return new Map(order.map((t) => [JSON.stringify(t), split.splitOf(t)]));
  };
  const first = sides(7, trajectories);
  assert.equal(first.size, 400, 'every trajectory is distinct');
  const validation = [...first.values()].filter((s) => s === 'validation').length;
  // 400 trajectories, p = 0.25: the count is 100 ± 3σ (σ ≈ 8.7).
  assert.ok(validation > 74 && validation < 126, `${validation} of 400 on the validation side`);
  assert.deepEqual(sides(7, [...trajectories].reverse()), first, 'order does not matter');
  const other = sides(8, trajectories);
  assert.notDeepEqual(other, first, 'another seed gives another split');
  const none = new ValidationSplit({ fraction: 0, seed: 7 });
  assert.ok(trajectories.every((t) => none.splitOf(t) === 'train'));
});

test('joined trajectories go to one side whatever order they were joined in', () => {
  for (let seed = 0; seed < 30; seed++) {
    const chain = trajectories.slice(0, 6);
    const forward = new ValidationSplit({ fraction: 0.5, seed });
    for (let i = 1; i < chain.length; i++) forward.join(chain[i - 1]!, chain[i]!);
    const backward = new ValidationSplit({ fraction: 0.5, seed });
    for (let i = chain.length - 1; i > 0; i--) backward.join(chain[i]!, chain[0]!);
    const side = forward.splitOf(chain[0]!);
    for (const t of chain) {
      assert.equal(forward.splitOf(t), side, `seed ${seed}: every joined trajectory on one side`);
      assert.equal(backward.splitOf(t), side, `seed ${seed}: the same side joined another way`);
    }
  }
});
