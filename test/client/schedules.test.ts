import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  createNightlySchedule,
  describeSchedule,
  triggerSchedule,
  triggerScheduleAndAwait,
} from '../../client/schedules';
import { startTestTemporal } from '../helpers/temporal';

// triggerScheduleAndAwait when the overlap policy drops its trigger: on a task queue no worker
// polls, a first triggered run stays running, so a second trigger under `skip` starts nothing. The
// call must then reject, naming the run still going, instead of waiting for a run that never comes.
// Its other path, a run started and awaited, is followed by test/docs/schedulesWalkthrough.test.ts.

let env: TestWorkflowEnvironment;
before(async () => {
  env = await startTestTemporal();
});
after(async () => {
  await env?.teardown();
});

test('a trigger the skip policy drops rejects, naming the run still going', { timeout: 60_000 }, async () => {
  const { client } = env;
  await createNightlySchedule(client, {
    schedule_id: 'unpolled',
    input: { config_path: 'nightly.yaml' },
    cron: '0 2 * * *',
    task_queue: 'no-worker-polls-this',
  });
  await triggerSchedule(client, 'unpolled');
  let running: string[] = [];
  for (let i = 0; i < 100 && running.length === 0; i++) {
    running = (await describeSchedule(client, 'unpolled')).info.runningActions.map((a) => a.workflow.workflowId);
    if (running.length === 0) await sleep(100);
  }
  assert.equal(running.length, 1, 'the first trigger started a run');
  assert.match(running[0]!, /^unpolled\/nightly/);

  const started = Date.now();
  await assert.rejects(
    triggerScheduleAndAwait(client, 'unpolled', { appearWithinMs: 2_000, intervalMs: 100 }),
    (err: Error) => {
      assert.match(err.message, /the trigger started no run within 2 s/);
      assert.ok(err.message.includes(`still going: ${running[0]}`), err.message);
      return true;
    },
  );
  assert.ok(Date.now() - started >= 2_000, 'it waited the time it was given');
  assert.deepEqual(
    (await describeSchedule(client, 'unpolled')).info.runningActions.map((a) => a.workflow.workflowId),
    running,
    'no second run started',
  );
});
