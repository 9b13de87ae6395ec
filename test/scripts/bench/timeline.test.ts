import assert from 'node:assert/strict';
import { test } from 'node:test';
import { msNumberToTs } from '@temporalio/common/lib/time';
import Long from 'long';
import type { HistoryEvent } from '../../../scripts/bench/history';
import { runRecord, stageTimeline } from '../../../scripts/bench/timeline';

// A hand-built history with known event times, so every figure of the breakdown can be checked
// against arithmetic done here rather than against the code's own output.

class HistoryBuilder {
  readonly events: HistoryEvent[] = [];
  private id = 0;

  private push(ms: number, attrs: Partial<HistoryEvent>): Long {
    const eventId = Long.fromNumber(++this.id);
    this.events.push({ eventId, eventTime: msNumberToTs(ms), ...attrs });
    return eventId;
  }

  started(ms: number, continuedFrom?: string): this {
    this.push(ms, {
      workflowExecutionStartedEventAttributes: continuedFrom ? { continuedExecutionRunId: continuedFrom } : {},
    });
    return this;
  }

  /** Scheduled, started and completed events of one activity, in that order. */
  activity(name: string, scheduled: number, started: number, completed: number): this {
    const scheduledEventId = this.push(scheduled, { activityTaskScheduledEventAttributes: { activityType: { name } } });
    this.push(started, { activityTaskStartedEventAttributes: { scheduledEventId } });
    this.push(completed, { activityTaskCompletedEventAttributes: { scheduledEventId } });
    return this;
  }

  /** Scheduled, started and completed events of one workflow task. */
  workflowTask(scheduled: number, started: number, completed: number): this {
    this.push(scheduled, { workflowTaskScheduledEventAttributes: {} });
    this.push(started, { workflowTaskStartedEventAttributes: {} });
    this.push(completed, { workflowTaskCompletedEventAttributes: {} });
    return this;
  }

  completed(ms: number): this {
    this.push(ms, { workflowExecutionCompletedEventAttributes: {} });
    return this;
  }

  continuedAsNew(ms: number): this {
    this.push(ms, { workflowExecutionContinuedAsNewEventAttributes: { newExecutionRunId: 'next' } });
    return this;
  }
}

test('one run: each phase and gap is read from the event times', () => {
  const t0 = 1_700_000_000_000;
  const h = new HistoryBuilder()
    .started(t0)
    .activity('materializeStage', t0 + 100, t0 + 110, t0 + 300)
    // Window of two: chunks 0 and 1 start together, 2 replaces 0 (20 ms later), 3 replaces 1 (30 ms later).
    .activity('runChunk', t0 + 320, t0 + 325, t0 + 1000)
    .activity('runChunk', t0 + 320, t0 + 330, t0 + 1200)
    .activity('runChunk', t0 + 1020, t0 + 1025, t0 + 1800)
    .activity('runChunk', t0 + 1230, t0 + 1240, t0 + 2000)
    .activity('finishStage', t0 + 2050, t0 + 2060, t0 + 2900)
    .completed(t0 + 2950);
  const t = stageTimeline([runRecord(h.events)]);
  assert.equal(t.totalMs, 2950);
  assert.equal(t.firstTaskMs, 100);
  assert.deepEqual(t.materialize, { queueMs: 10, runMs: 190 });
  assert.equal(t.toChunksMs, 20);
  assert.equal(t.chunks, 4);
  assert.equal(t.chunkSpanMs, 2000 - 320);
  assert.equal(t.chunkQueueMeanMs, (5 + 10 + 5 + 10) / 4);
  assert.equal(t.chunkRunMeanMs, (675 + 870 + 775 + 760) / 4);
  assert.equal(t.refillMeanMs, (20 + 30) / 2);
  assert.equal(t.meanChunksRunning, (675 + 870 + 775 + 760) / (2000 - 320));
  assert.equal(t.chunkMerges, 0);
  assert.equal(t.continueAsNewMs, 0);
  assert.equal(t.toFinishMs, 50);
  assert.deepEqual(t.finish, { queueMs: 10, runMs: 840 });
  assert.equal(t.closeMs, 50);
  assert.deepEqual(t.windows, {
    workflow: [t0, t0 + 2950],
    materialize: [t0 + 110, t0 + 300],
    chunks: [t0 + 320, t0 + 2000],
    finish: [t0 + 2060, t0 + 2900],
  });
});

test('workflow tasks on the critical path are the ones outside the chunk span', () => {
  const h = new HistoryBuilder()
    .started(0)
    .workflowTask(1, 5, 20)
    .activity('materializeStage', 20, 20, 50)
    .workflowTask(50, 58, 70)
    .activity('runChunk', 70, 71, 400)
    .activity('runChunk', 70, 72, 500)
    // Inside the span: the worker answers a finished chunk while the other one still runs.
    .workflowTask(400, 401, 499)
    .workflowTask(500, 510, 540)
    .activity('finishStage', 540, 541, 700)
    .workflowTask(700, 706, 720)
    .completed(720);
  const t = stageTimeline([runRecord(h.events)]);
  assert.equal(t.serialWorkflowTasks.count, 4);
  assert.equal(t.serialWorkflowTasks.dispatchMeanMs, (4 + 8 + 10 + 6) / 4);
  assert.equal(t.serialWorkflowTasks.runMeanMs, (15 + 12 + 30 + 14) / 4);
});

test('merges during the chunk span are counted apart from the finish after the last chunk', () => {
  const h = new HistoryBuilder()
    .started(0)
    .activity('materializeStage', 10, 11, 50)
    .activity('runChunk', 60, 61, 400)
    .activity('runChunk', 60, 62, 500)
    .activity('mergeChunks', 410, 412, 450)
    .activity('mergeChunks', 510, 511, 530)
    .activity('finishStage', 540, 541, 700)
    .completed(710);
  const t = stageTimeline([runRecord(h.events)]);
  assert.equal(t.chunkSpanMs, 500 - 60);
  assert.equal(t.chunkMerges, 2);
  assert.equal(t.chunkMergesRunMs, 38 + 19);
  assert.equal(t.toFinishMs, 40);
  assert.deepEqual(t.finish, { queueMs: 1, runMs: 159 });
  assert.deepEqual(t.windows.finish, [541, 700]);
  assert.equal(t.closeMs, 10);
});

test('a continued-as-new chain: chunks of every run count, and the gap between runs is its own figure', () => {
  const first = new HistoryBuilder()
    .started(0)
    .activity('materializeStage', 10, 12, 50)
    .activity('runChunk', 60, 61, 500)
    .continuedAsNew(520);
  const second = new HistoryBuilder()
    .started(600, 'first-run')
    .activity('runChunk', 620, 621, 900)
    .activity('finishStage', 910, 911, 990)
    .completed(1000);
  const runs = [runRecord(first.events), runRecord(second.events)];
  assert.deepEqual(
    runs.map((r) => r.events),
    [first.events.length, second.events.length],
  );
  const t = stageTimeline(runs);
  assert.equal(t.totalMs, 1000);
  assert.equal(t.chunks, 2);
  assert.equal(t.continueAsNewMs, 80);
  assert.equal(t.chunkSpanMs, 900 - 60);
  // The second run's chunk waited 120 ms after the first run's chunk completed (the continue-as-new).
  assert.equal(t.refillMeanMs, 120);
});

test('histories that do not cover a whole stage are refused instead of giving a partial breakdown', () => {
  const unfinished = new HistoryBuilder().started(0);
  unfinished.events.push({
    eventId: Long.fromNumber(99),
    eventTime: msNumberToTs(5),
    activityTaskScheduledEventAttributes: { activityType: { name: 'runChunk' } },
  });
  assert.throws(() => runRecord(unfinished.events), /runChunk .* never completed/);

  const noEnd = new HistoryBuilder().started(0).activity('materializeStage', 1, 2, 3);
  assert.throws(() => stageTimeline([runRecord(noEnd.events)]), /from workflow start to completion/);
});
