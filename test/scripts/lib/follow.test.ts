import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StageLines } from '../../../scripts/lib/follow';

test('one line per stage as it ends, including a stage that ended between two polls', () => {
  const lines = new StageLines(0);
  const chunks = { stage: 'collect', done: 60, total: 80, failed: 0, rolloutsPerSecond: 64, etaSeconds: null };
  const printed = [
    ...lines.observe('prepare', {}, null, 200),
    ...lines.observe('collect', {}, chunks, 900),
    // convert began and ended between these polls.
    ...lines.observe(
      'local_profile',
      {
        tasks: 20,
        rollouts: 80,
        rollout_failures: 0,
        candidates: 137,
        positive_trajectories: 52,
        deduped: 31,
        skipped: 0,
      },
      null,
      1600,
    ),
    ...lines.observe(
      'done',
      { local_profile_rollouts: 1096, local_profile_failures: 0, published: 43, all_pass: 90, all_fail: 4 },
      null,
      4000,
    ),
  ].map((line) => line.replace(/ +/g, ' '));
  assert.deepEqual(printed, [
    'prepare config and inputs checked, servers up [0.9 s]',
    'collect 80 rollouts of 20 tasks, 0 failed, 64/s [1.6 s]',
    'convert 137 candidates from 52 positive trajectories (31 duplicates, 0 skipped) [1.6 s]',
    'local_profile 1096 samples, 0 failed [4.0 s]',
    'publish 43 pivots published; dropped 90 all-pass, 4 all-fail [4.0 s]',
  ]);
  assert.deepEqual(lines.observe('done', {}, null, 5000), []);
});

test('the publish line names the filter rules that dropped mixed pivots, and only those', () => {
  const publishLine = (counts: Record<string, number>) =>
    new StageLines(0)
      .observe('done', { published: 33, all_pass: 90, all_fail: 4, ...counts }, null, 1000)
      .at(-1)!
      .replace(/ +/g, ' ');
  assert.equal(
    publishLine({ over_ceiling: 10, over_share: 2 }),
    'publish 33 pivots published; dropped 90 all-pass, 4 all-fail, 10 over the pass-rate ceiling, 2 over their action-kind share [1.0 s]',
  );
  assert.equal(publishLine({ over_budget: 0 }), 'publish 33 pivots published; dropped 90 all-pass, 4 all-fail [1.0 s]');
});
