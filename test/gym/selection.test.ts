import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyLocalProfile,
  localProfileRowSchema,
  localProfileStats,
  selectPivots,
  type LocalProfileStats,
} from '../../gym/selection';

function stats(taskIndex: number, rewards: number[], expected = rewards.length): LocalProfileStats {
  return {
    task_index: taskIndex,
    pass_rate: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
    min_reward: rewards.length ? Math.min(...rewards) : null,
    max_reward: rewards.length ? Math.max(...rewards) : null,
    num_samples: rewards.length,
    expected_num_samples: expected,
    missing_num_samples: expected - rewards.length,
  };
}

test('classifyLocalProfile covers every outcome', () => {
  assert.equal(classifyLocalProfile(stats(0, [1, 0, 1, 0])), 'mixed');
  assert.equal(classifyLocalProfile(stats(0, [1, 1, 1, 1])), 'all_pass');
  assert.equal(classifyLocalProfile(stats(0, [0, 0, 0, 0])), 'all_fail');
  assert.equal(classifyLocalProfile(stats(0, [0.5, 0.5, 0.5])), 'constant');
  assert.equal(classifyLocalProfile(stats(0, [0.25, 0.75])), 'mixed');
  assert.equal(classifyLocalProfile(undefined), 'incomplete');
  assert.equal(classifyLocalProfile(null, true), 'incomplete', 'no profile row means no sample, even in partial mode');
  assert.equal(classifyLocalProfile(stats(0, [], 8), true), 'incomplete');
});

test('missing samples make a candidate incomplete unless partial profiles are allowed', () => {
  const partialMixed = stats(0, [1, 0, 1], 8);
  assert.equal(classifyLocalProfile(partialMixed), 'incomplete');
  assert.equal(classifyLocalProfile(partialMixed, false), 'incomplete');
  assert.equal(classifyLocalProfile(partialMixed, true), 'mixed');
  assert.equal(classifyLocalProfile(stats(0, [1, 1], 8), true), 'all_pass');
  assert.equal(classifyLocalProfile(stats(0, [0], 8), true), 'all_fail');
});

test('a profile row without reward stats is incomplete', () => {
  const noReward = { ...stats(0, [1, 0]), pass_rate: null, min_reward: null, max_reward: null };
  assert.equal(classifyLocalProfile(noReward), 'incomplete');
});

test('localProfileStats reads a NeMo Gym reward profiling row', () => {
  const row = localProfileRowSchema.parse({
    _ng_task_index: 3,
    'mean/reward': 0.375,
    'max/reward': 1.0,
    'min/reward': 0.0,
    'median/reward': 0.0,
    'std/reward': 0.5,
    sample: { responses_create_params: { input: [] } },
    num_rollouts: 8,
    expected_num_rollouts: 8,
    missing_num_rollouts: 0,
    reward_profile_completion_pct: 100.0,
    rollout_infos: [],
  });
  assert.deepEqual(localProfileStats(row), {
    task_index: 3,
    pass_rate: 0.375,
    min_reward: 0,
    max_reward: 1,
    num_samples: 8,
    expected_num_samples: 8,
    missing_num_samples: 0,
  });
  assert.equal(localProfileRowSchema.safeParse({ _ng_task_index: 0 }).success, false);
});

const candidates = [
  { index: 0, uuid: 'c' },
  { index: 1, uuid: 'a' },
  { index: 2, uuid: 'b' },
  { index: 3, uuid: 'd' },
  { index: 4, uuid: 'e' },
  { index: 5, uuid: 'f' },
];
const profiles = [
  stats(0, [1, 1, 1, 0]), // 0.75
  stats(1, [1, 0, 0, 0]), // 0.25
  stats(2, [1, 1, 0, 0]), // 0.5
  stats(3, [1, 1, 1, 1]),
  stats(4, [1, 1, 0, 0]), // 0.5, ties with index 2
];

test('selectPivots returns outcomes in candidate order; a candidate without a profile row is incomplete', () => {
  const result = selectPivots(candidates, profiles);
  assert.deepEqual(
    result.map((r) => [r.candidate.index, r.outcome]),
    [
      [0, 'mixed'],
      [1, 'mixed'],
      [2, 'mixed'],
      [3, 'all_pass'],
      [4, 'mixed'],
      [5, 'incomplete'],
    ],
  );
  assert.equal(result[5]!.profile, null);
  assert.equal(result[2]!.profile?.pass_rate, 0.5);
});

test('profiles may be given as a Map keyed by task index', () => {
  const map = new Map(profiles.map((p) => [p.task_index, p]));
  assert.deepEqual(
    selectPivots(candidates, map).map((r) => r.outcome),
    selectPivots(candidates, profiles).map((r) => r.outcome),
  );
});

test('the budget drops the easiest mixed pivots first', () => {
  const outcomes = (max: number) => selectPivots(candidates, profiles, { max_pivots: max }).map((r) => r.outcome);
  assert.deepEqual(outcomes(4), ['mixed', 'mixed', 'mixed', 'all_pass', 'mixed', 'incomplete']);
  assert.deepEqual(outcomes(10), outcomes(4));
  assert.deepEqual(outcomes(3), ['over_budget', 'mixed', 'mixed', 'all_pass', 'mixed', 'incomplete']);
  assert.deepEqual(outcomes(1), ['over_budget', 'mixed', 'over_budget', 'all_pass', 'over_budget', 'incomplete']);
  assert.deepEqual(outcomes(0), ['over_budget', 'over_budget', 'over_budget', 'all_pass', 'over_budget', 'incomplete']);
});

test('ties in pass rate keep the smaller uuid, then the smaller index', () => {
  // Indices 2 (uuid b) and 4 (uuid e) both pass 0.5: with room for two, index 1 (0.25) and uuid b stay.
  const byUuid = selectPivots(candidates, profiles, { max_pivots: 2 }).map((r) => r.outcome);
  assert.deepEqual(byUuid, ['over_budget', 'mixed', 'mixed', 'all_pass', 'over_budget', 'incomplete']);

  const sameUuid = [
    { index: 0, uuid: 'x' },
    { index: 1, uuid: 'x' },
    { index: 2, uuid: 'x' },
  ];
  const tied = [stats(0, [1, 0]), stats(1, [1, 0]), stats(2, [1, 0])];
  assert.deepEqual(
    selectPivots(sameUuid, tied, { max_pivots: 2 }).map((r) => r.outcome),
    ['mixed', 'mixed', 'over_budget'],
  );
  // Same answer whatever order the inputs arrive in.
  const reversed = selectPivots([...sameUuid].reverse(), [...tied].reverse(), { max_pivots: 2 });
  assert.deepEqual(
    reversed.map((r) => [r.candidate.index, r.outcome]),
    [
      [2, 'over_budget'],
      [1, 'mixed'],
      [0, 'mixed'],
    ],
  );
});

test('the budget applies after the partial-profile rule', () => {
  const cands = [
    { index: 0, uuid: 'a' },
    { index: 1, uuid: 'b' },
  ];
  const partial = [stats(0, [1, 0, 0], 4), stats(1, [1, 1, 0, 0])];
  assert.deepEqual(
    selectPivots(cands, partial, { max_pivots: 1 }).map((r) => r.outcome),
    ['incomplete', 'mixed'],
  );
  assert.deepEqual(
    selectPivots(cands, partial, { max_pivots: 1, allow_partial: true }).map((r) => r.outcome),
    ['mixed', 'over_budget'],
  );
});

test('invalid options are rejected', () => {
  assert.throws(() => selectPivots(candidates, profiles, { max_pivots: -1 }));
  assert.throws(() => selectPivots(candidates, profiles, { max_pivots: 1.5 }));
  assert.throws(() => selectPivots(candidates, profiles, { maxPivots: 3 } as never));
});

test('the pass-rate ceiling drops mixed pivots at or above it, and the budget applies after it', () => {
  // Pass rates: 0 → 0.75, 1 → 0.25, 2 → 0.5, 3 all-pass, 4 → 0.5, 5 no profile.
  const outcomes = (opts: { max_pass_rate?: number; max_pivots?: number }) =>
    selectPivots(candidates, profiles, opts).map((r) => r.outcome);
  assert.deepEqual(outcomes({ max_pass_rate: 0.75 }), [
    'over_ceiling',
    'mixed',
    'mixed',
    'all_pass',
    'mixed',
    'incomplete',
  ]);
  assert.deepEqual(outcomes({ max_pass_rate: 0.5 }), [
    'over_ceiling',
    'mixed',
    'over_ceiling',
    'all_pass',
    'over_ceiling',
    'incomplete',
  ]);
  assert.deepEqual(outcomes({ max_pass_rate: 1 }), outcomes({}), 'a ceiling of 1 keeps every mixed pivot');
  // The ceiling leaves three; the budget of two then drops the easiest of them (0.5, uuid e).
  assert.deepEqual(outcomes({ max_pass_rate: 0.75, max_pivots: 2 }), [
    'over_ceiling',
    'mixed',
    'mixed',
    'all_pass',
    'over_budget',
    'incomplete',
  ]);
  assert.throws(() => selectPivots(candidates, profiles, { max_pass_rate: 0 }));
  assert.throws(() => selectPivots(candidates, profiles, { max_pass_rate: 1.5 }));
});
