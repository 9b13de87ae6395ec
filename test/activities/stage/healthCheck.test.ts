import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { finishStage } from '../../../activities/stage/finishStage';
import { checkStageHealth } from '../../../activities/stage/healthCheck';
import { NON_RETRYABLE_ERROR_TYPES, RolloutHealthError } from '../../../contracts/errors';
import { stageHealthSchema } from '../../../gym/health/stageHealth';
import { collectPlan, materialize, outPrefixOf, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';
import { answerWithTrajectory, FAILED_BY_FAILING_CALLS } from '../../helpers/healthTrajectory';

// A stage's finish runs 0.7.0's health checks on its merged rollouts. What they find is reported
// beside the stage's files and never changes them; with health_check_stops_run the run stops, not
// retried, once the files are published.

const gym = fakeGymForFile(
  { alpha: (row) => answerWithTrajectory(row, row.task_id === 'bad' ? 503 : 200) },
  'pivot-miner-health-',
);

const PUBLISHED = [
  'rollouts.jsonl',
  'rollouts_failures.jsonl',
  'rollouts_reward_profiling.jsonl',
  'rollouts_agent_metrics.json',
  'rollouts_aggregate_metrics.json',
];

/** Collects tasks `ok` and `bad` (2 repeats each) with the given top-level config, and finishes the stage. */
async function finishedStage(config: Record<string, unknown>) {
  const dir = gym.freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('ok'), taskRow('bad')]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 2 }, config);
  await runChunks(plan, (await materialize(plan)).chunks);
  const outPrefix = outPrefixOf(plan);
  const input = { plan, stage: 'collect' as const, outPrefix, allowPartialRollouts: false };
  const finished = new MockActivityEnvironment().run(finishStage, input).then(
    () => undefined,
    (err: unknown) => err,
  );
  const error = await finished;
  const files = Object.fromEntries(PUBLISHED.map((f) => [f, readFileSync(path.join(plan.runDir, f), 'utf8')]));
  const healthFile = `${outPrefix}_health.json`;
  const health = existsSync(healthFile)
    ? stageHealthSchema.parse(JSON.parse(readFileSync(healthFile, 'utf8')))
    : undefined;
  const reports = ['_quality_summary.json', '_rollout_verdicts.jsonl'].filter((f) => existsSync(`${outPrefix}${f}`));
  return { error, files, health, reports };
}

test('a failed check is reported beside the stage and changes none of its files', async () => {
  const checked = await finishedStage({});
  const unchecked = await finishedStage({ disable_health_check: true });
  assert.equal(checked.error, undefined);
  assert.deepEqual(checked.files, unchecked.files);
  assert.equal(unchecked.health, undefined);
  assert.deepEqual(unchecked.reports, []);
  assert.deepEqual(checked.reports, ['_quality_summary.json', '_rollout_verdicts.jsonl']);
  const health = checked.health!;
  assert.deepEqual(health.verdicts, { healthy: 2, unhealthy: 2, unobserved: 0 });
  assert.deepEqual(health.failed_checks, FAILED_BY_FAILING_CALLS);
  assert.equal(health.checks.model_call_failed.issues, 2);
  assert.equal(health.checks.record_unreadable.verdict, 'pass');
});

test('with health_check_stops_run a failed check stops the run, not retried, after publishing the same files', async () => {
  const reference = await finishedStage({});
  const stopped = await finishedStage({ health_check_stops_run: true });
  assert.ok(stopped.error instanceof RolloutHealthError, String(stopped.error));
  assert.match(stopped.error.message, /collect rollouts failed health checks: .*model_call_failed \(2\)/);
  assert.ok(NON_RETRYABLE_ERROR_TYPES.includes(stopped.error.name));
  assert.deepEqual(stopped.files, reference.files);
  assert.deepEqual(stopped.health, reference.health);
});

test('checks ignored as 0.7.0 names them do not stop the run', async () => {
  const run = await finishedStage({
    health_check_stops_run: true,
    health_check_ignored_checks: FAILED_BY_FAILING_CALLS,
  });
  assert.equal(run.error, undefined);
  assert.deepEqual(run.health!.failed_checks, []);
  assert.deepEqual(run.health!.verdicts, { healthy: 4, unhealthy: 0, unobserved: 0 });
  assert.equal(run.health!.checks.model_call_failed.verdict, 'ignored');
});

test('rollouts the checks cannot read leave the stage unchecked, not failed, as in 0.7.0', async () => {
  const dir = gym.freshDir();
  const plan = collectPlan(dir, { head_url: gym.head.url });
  const view = path.join(dir, 'view', 'rollouts');
  mkdirSync(path.dirname(view));
  writeFileSync(`${view}.jsonl`, Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
  const input = { plan, view, outPrefix: outPrefixOf(plan) };
  assert.equal(await new MockActivityEnvironment().run(checkStageHealth, input), undefined);
  assert.deepEqual(readdirSync(path.dirname(view)), ['rollouts.jsonl']);
});
