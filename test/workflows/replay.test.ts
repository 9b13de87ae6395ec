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

/** Replays under the workflow id the history was recorded with, which child ids are made from. */
async function replay(name: string, workflowId?: string): Promise<void> {
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: await workflowBundlePath() } },
    fixture(name),
    workflowId,
  );
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

// The demo pipeline with early profiling (recordPipelineHistory.ts): the run's history and its
// early-profiling child's, recorded by the code before early profiling's fallbacks (its failure,
// cancellation or clean-up never failing the run) and by today's code, both replay on today's.
for (const recorded of [
  'pivot_mining_before_early_fallbacks',
  'pivot_mining_overlap',
  'pivot_mining_segment_without_finish',
]) {
  test(`the run and its early profiling, recorded as ${recorded}, replay`, async () => {
    const run = `${recorded}.run.history.bin`;
    assert.ok(activityTypes(run).includes('publishStage'), 'the run published');
    assert.ok(activityTypes(`${recorded}.early.history.bin`).includes('alignPrefetched'), 'early profiling filed');
    await replay(run, 'record-pipeline');
    await replay(`${recorded}.early.history.bin`, 'record-pipeline/prefetch');
  });
}

/** Whether a history recorded the patch `id`. */
const marked = (name: string, id: string) =>
  (fixture(name).events ?? []).some((e) =>
    e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.some((p) =>
      Buffer.from(p.data ?? [])
        .toString()
        .includes(id),
    ),
  );

test('the fallbacks’ patch marker is in the run recorded with them, and not before', () => {
  assert.equal(marked('pivot_mining_overlap.run.history.bin', 'early-never-fails-run'), true);
  assert.equal(marked('pivot_mining_before_early_fallbacks.run.history.bin', 'early-never-fails-run'), false);
});

// Early profiling recorded before segments lost their finish started collectRolloutsWorkflow
// children (the replays above keep doing so); recorded after, it starts earlySegmentWorkflow, whose
// own history ends in publishing its samples.
test('a segment recorded without a finish replays, and the segments before it had one', async () => {
  const early = (recorded: string) => `${recorded}.early.history.bin`;
  const childTypes = (name: string) =>
    (fixture(name).events ?? []).flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? [],
    );
  assert.ok(marked(early('pivot_mining_segment_without_finish'), 'early-segment-without-finish'));
  assert.ok(!marked(early('pivot_mining_overlap'), 'early-segment-without-finish'));
  assert.deepEqual(
    new Set(childTypes(early('pivot_mining_segment_without_finish'))),
    new Set(['earlySegmentWorkflow']),
  );
  assert.deepEqual(new Set(childTypes(early('pivot_mining_overlap'))), new Set(['collectRolloutsWorkflow']));
  const segment = 'pivot_mining_segment_without_finish.segment.history.bin';
  const types = activityTypes(segment);
  assert.equal(types.at(-1), 'publishSegmentSamples');
  assert.ok(!types.includes('finishStage') && !types.includes('stageAccounting'), types.join(' '));
  await replay(segment);
});
