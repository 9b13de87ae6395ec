import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundlePath } from '../../workers/workflowBundle';

// Recorded collect-stage histories (WorkflowHandle.fetchHistory(), protobuf-encoded) replayed against
// today's workflow code: a stage that was running when the workers were upgraded must go on the way
// it started, so a change to the order of commands keeps the old order behind patched() until the
// old branch is retired with deprecatePatch(). Binary, because this install's historyFromJSON cannot
// load JSON histories ("type must be a Type"). recordHistory.ts beside the fixtures records one.

const fixture = (name: string) =>
  temporal.api.history.v1.History.decode(readFileSync(path.join(__dirname, 'fixtures', name)));

async function replay(name: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: await workflowBundlePath() } }, fixture(name));
}

const activityTypes = (name: string): string[] =>
  (fixture(name).events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

const patchMarkers = (name: string): number =>
  (fixture(name).events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length;

test('a stage recorded with all three patches replays on the code that retired their old branches', async () => {
  const name = 'collect_stage_with_patches.history.bin';
  assert.deepEqual(activityTypes(name).slice(-2), ['finishStage', 'stageAccounting']);
  assert.equal(patchMarkers(name), 3);
  await replay(name);
});

// Histories begun before a retired patch took its old branch; they must finish before this release
// is deployed. Replaying them fails, which is what keeps this test honest about what was retired.
for (const [name, tail] of [
  ['collect_stage_before_merge_during_chunks.history.bin', ['mergeShards', 'profileStage']],
  ['collect_stage_merge_during_chunks.history.bin', ['finishMerge', 'profileStage', 'aggregateMetricsStage']],
  ['collect_stage_finish_in_one_activity.history.bin', ['finishStage']],
] as const) {
  test(`a stage recorded before a retired patch (ending ${tail.join(', ')}) no longer replays`, async () => {
    assert.deepEqual(activityTypes(name).slice(-tail.length), tail);
    await assert.rejects(replay(name), (err: Error) => err.name === 'DeterminismViolationError');
  });
}
