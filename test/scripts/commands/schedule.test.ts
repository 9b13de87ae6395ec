import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nightlyScheduleOptions, temporalScheduleCreateCommand } from '../../../client/schedules';
import { scheduleSettingsFromFlags } from '../../../scripts/commands/schedule';

const flags = {
  config: 'configs/nightly.yaml',
  cron: '30 2 * * *',
  timeZone: 'Europe/Berlin',
  overlap: 'skip',
  catchupWindow: '2h',
  jitter: '5m',
  taskQueue: 'pivot-mining',
};

test('schedule create flags become a SKIP-overlap cron schedule with a schedule-scoped workflow id', () => {
  const options = nightlyScheduleOptions(scheduleSettingsFromFlags('nightly', flags));
  assert.deepEqual(options.spec, { cronExpressions: ['30 2 * * *'], timezone: 'Europe/Berlin', jitter: 300_000 });
  assert.deepEqual(options.policies, { overlap: 'SKIP', catchupWindow: 7_200_000 });
  assert.equal(options.action.type, 'startWorkflow');
  assert.equal(options.action.workflowId, 'nightly/nightly');
  assert.deepEqual(options.action.type === 'startWorkflow' && options.action.args, [
    { config_path: 'configs/nightly.yaml' },
  ]);
});

test('the equivalent temporal CLI command carries the same settings', () => {
  const cmd = temporalScheduleCreateCommand(scheduleSettingsFromFlags('nightly', { ...flags, overlap: 'buffer-one' }));
  for (const part of [
    '--schedule-id nightly',
    "--cron '30 2 * * *'",
    '--time-zone Europe/Berlin',
    '--overlap-policy BufferOne',
    '--catchup-window 2h',
    '--jitter 5m',
    '--workflow-id nightly/nightly',
    '--type nightlyMiningWorkflow',
    `--input '{"config_path":"configs/nightly.yaml"}'`,
  ]) {
    assert.ok(cmd.includes(part), `${part} missing from:\n${cmd}`);
  }
});

test('bad flags are refused with the flag name', () => {
  assert.throws(
    () => scheduleSettingsFromFlags('nightly', { ...flags, timeZone: 'Mars/Olympus' }),
    /--time-zone: an IANA time zone/,
  );
  assert.throws(() => scheduleSettingsFromFlags('nightly', { ...flags, jitter: '5 minutes' }), /--jitter: a duration/);
  assert.throws(() => scheduleSettingsFromFlags('nightly', { ...flags, overlap: 'sometimes' }), /--overlap/);
  assert.throws(() => scheduleSettingsFromFlags('../x', flags), /--schedule-id/);
});
