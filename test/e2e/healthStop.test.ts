import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { CollectStageInput } from '../../contracts/payloads';
import type { RunningServer } from '../../servers/http';
import { collectStageTest } from '../helpers/collectStage';
import { answerWithTrajectory, FAILED_BY_FAILING_CALLS } from '../helpers/healthTrajectory';
import { startFakeAgent, startFakeHead, type FakeAgent } from '../activities/fakeGym';

// health_check_stops_run on a real Temporal server: a collect stage whose first task fails 0.7.0's
// health checks publishes the files it publishes with the option off, then fails its workflow with
// a RolloutHealthError that Temporal does not retry.

const settings = {
  servers: {},
  collect: { input_jsonl: 'configs/demo_tasks.jsonl', agent_name: 'alpha', num_repeats: 2, chunk_size: 8 },
};
const stage = collectStageTest('health-stop', settings);
let agent: FakeAgent;
let head: RunningServer;

before(async () => {
  agent = await startFakeAgent('alpha', (row) => answerWithTrajectory(row, row._ng_task_index === 0 ? 503 : 200));
  head = await startFakeHead([agent]);
  settings.servers = { mode: 'attach', head_url: head.url };
});

after(async () => {
  await Promise.all([agent.server.close(), head.close()]);
});

const FILES = [
  'rollouts.jsonl',
  'rollouts_failures.jsonl',
  'rollouts_reward_profiling.jsonl',
  'rollouts_health.json',
  'rollouts_rollout_verdicts.jsonl',
];
const files = (input: CollectStageInput) =>
  FILES.map((f) => readFileSync(path.join(input.plan.runDir, f), 'utf8').replaceAll(input.plan.runDir, '<run>'));

function withConfig(input: CollectStageInput, more: Record<string, unknown>): CollectStageInput {
  return { ...input, plan: { ...input.plan, config: { ...input.plan.config, ...more } } };
}

test(
  'a failed health check stops the stage, not retried, after its files are published',
  { timeout: 300_000 },
  async () => {
    const reference = stage.input('reports');
    await (await stage.start('health-reports', reference)).result();
    const health = JSON.parse(readFileSync(path.join(reference.plan.runDir, 'rollouts_health.json'), 'utf8'));
    assert.deepEqual(health.failed_checks, FAILED_BY_FAILING_CALLS);

    const stopped = withConfig(stage.input('stops'), { health_check_stops_run: true });
    const err = await (await stage.start('health-stops', stopped)).result().then(
      () => assert.fail('the stage should have stopped'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WorkflowFailedError, String(err));
    assert.ok(err.cause instanceof ActivityFailure, String(err.cause));
    assert.equal(err.cause.activityType, 'finishStage');
    const cause = err.cause.cause;
    assert.ok(cause instanceof ApplicationFailure, String(cause));
    assert.equal(cause.type, 'RolloutHealthError');
    assert.match(cause.message, /collect rollouts failed health checks: rollout_ended_on_failed_model_call \(2\)/);
    assert.equal(err.cause.retryState, 'NON_RETRYABLE_FAILURE');
    assert.deepEqual(files(stopped), files(reference));
    assert.ok(existsSync(path.join(stopped.plan.runDir, 'rollouts_quality_summary.json')));
  },
);
