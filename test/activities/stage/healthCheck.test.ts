import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { finishStage } from '../../../activities/stage/finishStage';
import { NON_RETRYABLE_ERROR_TYPES, RolloutHealthError } from '../../../contracts/errors';
import { stageHealthSchema } from '../../../gym/health/stageHealth';
import type { RunningServer } from '../../../servers/http';
import {
  collectPlan,
  materialize,
  outPrefixOf,
  runChunks,
  startFakeAgent,
  startFakeHead,
  taskRow,
  writeJsonl,
  type FakeAgent,
} from '../fakeGym';

// A stage's finish runs 0.7.0's health checks on its merged rollouts. What they find is reported
// beside the stage's files and never changes them; with health_check_stops_run the run stops, not
// retried, once the files are published.

type Row = Record<string, any>;

const POLICY = { type: 'responses_api_models', name: 'policy' };

/** A one-turn trajectory whose single model call answered `status`. */
function trajectory(row: Row, status: number): Row {
  const id = `${row._ng_task_index}-${row._ng_rollout_index}`;
  const failed = status >= 400;
  return {
    task_id: String(row.task_id),
    rollout_id: id,
    turns: [
      {
        invocation_id: 'root',
        task_id: String(row.task_id),
        rollout_id: id,
        turn_no: 1,
        timestamp: 1,
        step_count: 1,
        answer: failed ? null : 'done',
        model_calls: [{ model_call_id: `call-${id}` }],
      },
    ],
    model_calls: [
      {
        model_call_id: `call-${id}`,
        response_metadata: { model_ref: POLICY, status_code: status, ...(failed ? {} : { response_id: `r-${id}` }) },
        token_stats: { prompt_tokens: 3, completion_tokens: failed ? 0 : 2 },
      },
    ],
  };
}

let agent: FakeAgent;
let head: RunningServer;
const dirs: string[] = [];

before(async () => {
  agent = await startFakeAgent('alpha', (row) => ({
    response: { output: [], usage: { input_tokens: 3, output_tokens: row.task_id === 'bad' ? 0 : 2 } },
    reward: row.task_id === 'bad' ? 0 : 1,
    ng_trajectory: trajectory(row, row.task_id === 'bad' ? 503 : 200),
  }));
  head = await startFakeHead([agent]);
});

after(async () => {
  await Promise.all([agent.server.close(), head.close()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The checks task `bad` fails: its one call answers 503, with no message and 0 completion tokens. */
const FAILED_BY_BAD = [
  'rollout_ended_on_failed_model_call',
  'agent_turn_hollow',
  'model_call_zero_completion_tokens',
  'model_call_failed',
  'task_consistently_unhealthy',
  'task_no_successful_model_calls',
];

const PUBLISHED = [
  'rollouts.jsonl',
  'rollouts_failures.jsonl',
  'rollouts_reward_profiling.jsonl',
  'rollouts_agent_metrics.json',
  'rollouts_aggregate_metrics.json',
];

/** Collects tasks `ok` and `bad` (2 repeats each) with the given top-level config, and finishes the stage. */
async function finishedStage(config: Row) {
  dirs.push(mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-health-')));
  writeJsonl(path.join(dirs.at(-1)!, 'tasks.jsonl'), [taskRow('ok'), taskRow('bad')]);
  const plan = collectPlan(dirs.at(-1)!, { head_url: head.url }, { num_repeats: 2 }, config);
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
  return { error, files, health, qualitySummary: existsSync(`${outPrefix}_quality_summary.json`) };
}

test('a failed check is reported beside the stage and changes none of its files', async () => {
  const checked = await finishedStage({});
  const unchecked = await finishedStage({ disable_health_check: true });
  assert.equal(checked.error, undefined);
  assert.deepEqual(checked.files, unchecked.files);
  assert.equal(unchecked.health, undefined);
  assert.equal(unchecked.qualitySummary, false);
  assert.ok(checked.qualitySummary);
  const health = checked.health!;
  assert.deepEqual(health.verdicts, { healthy: 2, unhealthy: 2, unobserved: 0 });
  assert.deepEqual(health.failed_checks, FAILED_BY_BAD);
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
  const run = await finishedStage({ health_check_stops_run: true, health_check_ignored_checks: FAILED_BY_BAD });
  assert.equal(run.error, undefined);
  assert.deepEqual(run.health!.failed_checks, []);
  assert.deepEqual(run.health!.verdicts, { healthy: 4, unhealthy: 0, unobserved: 0 });
  assert.equal(run.health!.checks.model_call_failed.verdict, 'ignored');
});
