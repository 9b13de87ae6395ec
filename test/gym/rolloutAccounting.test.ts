import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RolloutAccountant, accountingCounts, accountingProblems } from '../../gym/rolloutAccounting';
import { buildRunSummary, pivotAccountingAddsUp } from '../../gym/runSummary';
import { accountingLine } from '../../scripts/lib/printResult';

// Six expected rollouts: one clean, one recovered after a 5xx, one out of attempts (3 × 5xx), one
// flagged terminal by its agent after one attempt, one whose last attempt timed out after a 429
// (retryable: a resume tries it again), and one written nowhere (`_ng_no_persist`).
function sixRollouts() {
  const a = new RolloutAccountant(6, 3);
  a.addFailure('1:0', 'http_5xx', false);
  for (let i = 0; i < 3; i++) a.addFailure('2:0', 'http_5xx', false);
  a.addFailure('3:0', 'agent_reported', true);
  a.addFailure('4:0', 'http_429', false);
  a.addFailure('4:0', 'timeout', false);
  a.addSuccess('0:0');
  a.addSuccess('1:0');
  return a.result();
}

test('every expected rollout is counted once: succeeded, failed by its last class, or omitted', () => {
  const result = sixRollouts();
  assert.deepEqual(result, {
    expected: 6,
    succeeded: 2,
    failed: 3,
    failed_by_class: { agent_reported: 1, http_5xx: 1, timeout: 1 },
    terminal: 2,
    omitted: 1,
    failed_attempts: 7,
    recovered: 1,
  });
  assert.deepEqual(accountingProblems(result), []);
  assert.deepEqual(accountingCounts('collect', result), {
    'collect.expected': 6,
    'collect.succeeded': 2,
    'collect.failed': 3,
    'collect.failed.agent_reported': 1,
    'collect.failed.http_5xx': 1,
    'collect.failed.timeout': 1,
    'collect.terminal': 2,
    'collect.omitted': 1,
  });
  assert.equal(
    accountingLine('collect', result),
    'collect: 6 expected = 2 succeeded + 3 failed (agent_reported 1, http_5xx 1, timeout 1; 2 terminal) + 1 omitted',
  );
});

test('counts that do not add up are named', () => {
  const result = sixRollouts();
  assert.deepEqual(accountingProblems({ ...result, succeeded: 3 }), [
    'succeeded 3 + failed 3 + omitted 1 != expected 6',
  ]);
  assert.deepEqual(accountingProblems({ ...result, failed_by_class: { http_5xx: 1 } }), [
    'failed_by_class sums to 1, not failed 3',
  ]);
  const stray = new RolloutAccountant(1, 3);
  stray.addSuccess('0:0');
  stray.addFailure('9:9', 'http_5xx', true);
  assert.match(accountingProblems(stray.result()).join('\n'), /omitted -1 < 0/);
});

test('run_summary marks each stage and the pivots as adding up, or says why not', () => {
  const pivots = {
    candidates: 12,
    published: 3,
    published_partial: 0,
    held_back_incomplete: 2,
    all_pass: 2,
    all_fail: 2,
    constant: 0,
    over_ceiling: 1,
    over_budget: 1,
    over_share: 1,
  };
  const summary = buildRunSummary({
    runId: 'r',
    pipelineVersion: 'v',
    numSamples: 8,
    allowPartial: false,
    accounting: { collect: sixRollouts(), local_profile: { ...sixRollouts(), omitted: 0 } },
    pivots,
    publishedBySplit: { train: 2, validation: 1 },
    counts: { b: 1, a: 2 },
  });
  assert.equal(summary.stages.collect!.adds_up, true);
  assert.equal(summary.stages.local_profile!.adds_up, false);
  assert.deepEqual(summary.stages.local_profile!.problems, ['succeeded 2 + failed 3 + omitted 0 != expected 6']);
  assert.equal(summary.pivots.adds_up, true);
  assert.deepEqual(summary.pivots.published_by_split, { train: 2, validation: 1 });
  assert.deepEqual(Object.keys(summary.counts), ['a', 'b']);
  assert.equal(pivotAccountingAddsUp({ ...pivots, published: 4 }), false);
  assert.equal(pivotAccountingAddsUp(pivots, { train: 3, validation: 1 }), false, 'the splits hold one pivot too many');
});
