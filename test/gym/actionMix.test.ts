import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionMix, limitActionMix, type ActionKind, type MixCandidate } from '../../gym/actionMix';
import type { PivotSelection, SelectionOutcome } from '../../gym/selection';
import { random as seededRandom } from '../helpers/random';

function selection(index: number, kind: ActionKind, passRate: number, outcome: SelectionOutcome = 'mixed') {
  return {
    candidate: { index, uuid: `u-${String(index).padStart(3, '0')}`, action_type: kind },
    outcome,
    profile: {
      task_index: index,
      pass_rate: passRate,
      min_reward: 0,
      max_reward: 1,
      num_samples: 8,
      expected_num_samples: 8,
      missing_num_samples: 0,
    },
  } satisfies PivotSelection<MixCandidate>;
}

const share = (mix: Record<ActionKind, number>, kind: ActionKind) =>
  mix[kind] / Object.values(mix).reduce((a, b) => a + b, 0);

test('an over-represented kind loses its easiest pivots until its share holds', () => {
  // 6 messages (pass rates 0.125 .. 0.75), 4 tool calls: messages are 60%.
  const selections = [
    ...[0.125, 0.75, 0.25, 0.625, 0.375, 0.5].map((rate, i) => selection(i, 'message', rate)),
    ...[0.5, 0.5, 0.25, 0.75].map((rate, i) => selection(10 + i, 'function_call', rate)),
    selection(20, 'message', 0.1, 'all_fail'),
  ];
  limitActionMix(selections, { message: 0.2 });
  const mix = actionMix(selections);
  // The largest n with n <= 0.2 × (4 + n) is 1: the hardest message (0.125) stays.
  assert.deepEqual(mix, { message: 1, function_call: 4, function_call_batch: 0 });
  assert.ok(share(mix, 'message') <= 0.2);
  assert.deepEqual(
    selections.filter((s) => s.candidate.action_type === 'message').map((s) => [s.candidate.index, s.outcome]),
    [
      [0, 'mixed'],
      [1, 'over_share'],
      [2, 'over_share'],
      [3, 'over_share'],
      [4, 'over_share'],
      [5, 'over_share'],
      [20, 'all_fail'],
    ],
  );
  assert.ok(selections.filter((s) => s.candidate.action_type === 'function_call').every((s) => s.outcome === 'mixed'));
});

test('shares within their caps, and no caps, change nothing', () => {
  const selections = [selection(0, 'message', 0.5), selection(1, 'function_call', 0.5)];
  limitActionMix(selections, { message: 0.5 });
  limitActionMix(selections, {});
  assert.deepEqual(
    selections.map((s) => s.outcome),
    ['mixed', 'mixed'],
  );
});

test('several caps hold at once, and 0 removes a kind', () => {
  const random = seededRandom(11);
  const kinds: ActionKind[] = ['message', 'function_call', 'function_call_batch'];
  for (let round = 0; round < 50; round++) {
    const selections = Array.from({ length: 1 + Math.floor(random() * 60) }, (_, i) =>
      selection(i, kinds[Math.floor(random() * 3)]!, Math.floor(random() * 7 + 1) / 8),
    );
    const caps = { message: Math.floor(random() * 5) / 10, function_call_batch: Math.floor(random() * 5) / 10 };
    limitActionMix(selections, caps);
    const mix = actionMix(selections);
    const total = mix.message + mix.function_call + mix.function_call_batch;
    if (total === 0) continue;
    assert.ok(share(mix, 'message') <= caps.message + 1e-9, `round ${round}: message ${share(mix, 'message')}`);
    assert.ok(share(mix, 'function_call_batch') <= caps.function_call_batch + 1e-9, `round ${round}: batch`);
    assert.equal(mix.function_call, selections.filter((s) => s.candidate.action_type === 'function_call').length);
  }
  const gone = [selection(0, 'message', 0.5), selection(1, 'function_call', 0.5)];
  limitActionMix(gone, { message: 0 });
  assert.deepEqual(actionMix(gone), { message: 0, function_call: 1, function_call_batch: 0 });
});

test('the pivots dropped do not depend on the order the selections come in', () => {
  const build = () =>
    Array.from({ length: 40 }, (_, i) =>
      selection(i, i % 3 === 0 ? 'function_call' : 'message', (((i * 5) % 7) + 1) / 8),
    );
  const forward = build();
  const backward = build().reverse();
  limitActionMix(forward, { message: 0.3 });
  limitActionMix(backward, { message: 0.3 });
  const dropped = (sel: PivotSelection<MixCandidate>[]) =>
    sel
      .filter((s) => s.outcome === 'over_share')
      .map((s) => s.candidate.index)
      .sort((a, b) => a - b);
  assert.deepEqual(dropped(backward), dropped(forward));
  assert.ok(dropped(forward).length > 0);
});
