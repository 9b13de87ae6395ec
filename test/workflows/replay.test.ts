import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../../workers/workflowBundle';

// Recorded collect-stage histories (WorkflowHandle.fetchHistory(), protobuf-encoded) replayed against
// today's workflow code: a stage that was running when the workers were upgraded must go on the way
// it started, so a change to the order of commands has to keep the old order behind patched().
// Binary, because this install's historyFromJSON cannot load JSON histories ("type must be a Type").

const fixture = (name: string) =>
  temporal.api.history.v1.History.decode(readFileSync(path.join(__dirname, 'fixtures', name)));

async function replay(name: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: await workflowBundlePath() } }, fixture(name));
}

test('a stage recorded before merging moved into the chunk phase replays: one mergeShards after the last chunk, then the profile', async () => {
  const history = fixture('collect_stage_before_merge_during_chunks.history.bin');
  const activities = (history.events ?? []).flatMap(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  assert.deepEqual(activities.slice(-2), ['mergeShards', 'profileStage']);
  await replay('collect_stage_before_merge_during_chunks.history.bin');
});

test('a stage recorded with merges during the chunk phase and a three-activity tail replays', async () => {
  const history = fixture('collect_stage_merge_during_chunks.history.bin');
  const activities = (history.events ?? []).flatMap(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  assert.ok(activities.includes('mergeChunks'));
  assert.deepEqual(activities.slice(-3), ['finishMerge', 'profileStage', 'aggregateMetricsStage']);
  await replay('collect_stage_merge_during_chunks.history.bin');
});

test('a stage recorded with its tail as one finishStage activity replays', async () => {
  const history = fixture('collect_stage_finish_in_one_activity.history.bin');
  const activities = (history.events ?? []).flatMap(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  assert.ok(activities.includes('mergeChunks'));
  assert.equal(activities.at(-1), 'finishStage');
  await replay('collect_stage_finish_in_one_activity.history.bin');
});
