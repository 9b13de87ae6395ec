import { tsToMs } from '@temporalio/common/lib/time';
import type { HistoryEvent } from './history';

// Where a durable stage spends its wall time, read from the Temporal server's own event timestamps
// (activity scheduled / started / completed, workflow started / completed) across a continued-as-new
// chain, so the breakdown is measured by the server, not estimated by the bench. Stages merge the
// chunks as they finish (mergeChunks, inside the chunk span) and after the last chunk run one
// finishStage: the rest of the merge, then the profile beside the aggregate metrics.

interface ActivitySpan {
  name: string;
  scheduled: number;
  started: number;
  completed: number;
}

interface WorkflowTaskSpan {
  scheduled: number;
  started: number;
  completed: number;
}

export interface StageTimeline {
  /** Workflow started → workflow completed, over every run of the chain. */
  totalMs: number;
  /** Workflow started → materialize scheduled: the first workflow task. */
  firstTaskMs: number;
  materialize: { queueMs: number; runMs: number };
  /** Materialize completed → first chunk scheduled. */
  toChunksMs: number;
  /** First chunk scheduled → last chunk completed. */
  chunkSpanMs: number;
  chunks: number;
  chunkQueueMeanMs: number;
  chunkRunMeanMs: number;
  /** A chunk completed → its replacement scheduled: one workflow task round trip per chunk. */
  refillMeanMs: number;
  /** Time-weighted mean number of chunk activities running during the chunk span. */
  meanChunksRunning: number;
  /** Merges of finished chunks while later chunks ran: how many, and their summed run time. */
  chunkMerges: number;
  chunkMergesRunMs: number;
  /** Last event of a run → first event of the next (continue-as-new), summed. */
  continueAsNewMs: number;
  /** Last chunk completed → finishStage scheduled. */
  toFinishMs: number;
  /** The rest of the merge, then the profile beside the aggregate metrics. */
  finish: { queueMs: number; runMs: number };
  /** finishStage completed → workflow completed. */
  closeMs: number;
  /** Workflow tasks outside the chunk span, where each one is on the round's critical path: how
   * many, and their mean wait for a worker (scheduled → started, the server's dispatch) and mean
   * time on the worker (started → completed, activation and commands included). */
  serialWorkflowTasks: { count: number; dispatchMeanMs: number; runMeanMs: number };
  /** Epoch-ms [start, end] of each phase, to match against samples taken on this machine's clock. */
  windows: Record<StagePhase, [number, number]>;
}

export type StagePhase = 'workflow' | 'materialize' | 'chunks' | 'finish';

const at = (e: HistoryEvent) => tsToMs(e.eventTime);

/** What the breakdown needs of one run's history; the events themselves are not kept. */
export interface RunRecord {
  events: number;
  firstMs: number;
  lastMs: number;
  startsWorkflow: boolean;
  completesWorkflow: boolean;
  activities: ActivitySpan[];
  workflowTasks: WorkflowTaskSpan[];
}

export function runRecord(events: HistoryEvent[]): RunRecord {
  const activities: ActivitySpan[] = [];
  const byId = new Map<string, ActivitySpan>();
  const workflowTasks: WorkflowTaskSpan[] = [];
  // A workflow task's events come in order and never overlap another's.
  let task: WorkflowTaskSpan | undefined;
  for (const e of events) {
    if (e.workflowTaskScheduledEventAttributes) task = { scheduled: at(e), started: NaN, completed: NaN };
    else if (e.workflowTaskStartedEventAttributes && task) task.started = at(e);
    else if (e.workflowTaskCompletedEventAttributes && task) {
      task.completed = at(e);
      workflowTasks.push(task);
      task = undefined;
    }
    if (e.activityTaskScheduledEventAttributes) {
      const span = {
        name: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?',
        scheduled: at(e),
        started: NaN,
        completed: NaN,
      };
      byId.set(String(e.eventId), span);
      activities.push(span);
    } else if (e.activityTaskStartedEventAttributes) {
      byId.get(String(e.activityTaskStartedEventAttributes.scheduledEventId))!.started = at(e);
    } else if (e.activityTaskCompletedEventAttributes) {
      byId.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId))!.completed = at(e);
    }
  }
  const unfinished = activities.find((s) => Number.isNaN(s.completed) || Number.isNaN(s.started));
  if (unfinished)
    throw new Error(`activity ${unfinished.name} scheduled at ${unfinished.scheduled} never completed in its run`);
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) throw new Error('a run with an empty history');
  return {
    events: events.length,
    firstMs: at(first),
    lastMs: at(last),
    startsWorkflow:
      Boolean(first.workflowExecutionStartedEventAttributes) &&
      !first.workflowExecutionStartedEventAttributes?.continuedExecutionRunId,
    completesWorkflow: Boolean(last.workflowExecutionCompletedEventAttributes),
    activities,
    workflowTasks,
  };
}

function only(spans: ActivitySpan[], ...names: string[]): ActivitySpan {
  const found = spans.filter((s) => names.includes(s.name));
  if (found.length !== 1)
    throw new Error(`expected one ${names.join(' or ')} activity in the history, found ${found.length}`);
  return found[0]!;
}

/** The mean of `xs`, 0 for none. */
export const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Mean of "how many spans are running" over [from, to], from the spans' start and end edges. */
function meanRunning(spans: ActivitySpan[], from: number, to: number): number {
  const busy = spans.reduce((sum, s) => sum + Math.max(0, Math.min(s.completed, to) - Math.max(s.started, from)), 0);
  return to > from ? busy / (to - from) : 0;
}

/** Each chunk scheduled after the first window waited for the latest completion before it. */
function refillDelays(chunks: ActivitySpan[]): number[] {
  const completions = chunks.map((c) => c.completed).sort((a, b) => a - b);
  const delays: number[] = [];
  for (const c of chunks) {
    // Binary search for the last completion at or before this scheduling.
    let lo = 0;
    let hi = completions.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (completions[mid]! <= c.scheduled) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) delays.push(c.scheduled - completions[lo - 1]!);
  }
  return delays;
}

export function stageTimeline(runs: RunRecord[]): StageTimeline {
  const spans = runs.flatMap((r) => r.activities);
  const first = runs[0];
  const last = runs.at(-1);
  if (!first?.startsWorkflow || !last?.completesWorkflow)
    throw new Error('the runs do not go from workflow start to completion');
  const materialize = only(spans, 'materializeStage');
  const finish = only(spans, 'finishStage');
  const chunkMerges = spans.filter((s) => s.name === 'mergeChunks');
  const chunks = spans.filter((s) => s.name === 'runChunk');
  if (chunks.length === 0) throw new Error('the history has no chunk activities');
  const chunkStart = chunks.reduce((t, c) => Math.min(t, c.scheduled), Infinity);
  const chunkEnd = chunks.reduce((t, c) => Math.max(t, c.completed), -Infinity);
  const serialTasks = runs
    .flatMap((r) => r.workflowTasks)
    .filter((w) => w.completed <= chunkStart || w.scheduled >= chunkEnd);
  let continueAsNewMs = 0;
  for (let i = 1; i < runs.length; i++) continueAsNewMs += runs[i]!.firstMs - runs[i - 1]!.lastMs;
  return {
    totalMs: last.lastMs - first.firstMs,
    firstTaskMs: materialize.scheduled - first.firstMs,
    materialize: {
      queueMs: materialize.started - materialize.scheduled,
      runMs: materialize.completed - materialize.started,
    },
    toChunksMs: chunkStart - materialize.completed,
    chunkSpanMs: chunkEnd - chunkStart,
    chunks: chunks.length,
    chunkQueueMeanMs: mean(chunks.map((c) => c.started - c.scheduled)),
    chunkRunMeanMs: mean(chunks.map((c) => c.completed - c.started)),
    refillMeanMs: mean(refillDelays(chunks)),
    meanChunksRunning: meanRunning(chunks, chunkStart, chunkEnd),
    chunkMerges: chunkMerges.length,
    chunkMergesRunMs: chunkMerges.reduce((sum, s) => sum + s.completed - s.started, 0),
    continueAsNewMs,
    toFinishMs: finish.scheduled - chunkEnd,
    finish: { queueMs: finish.started - finish.scheduled, runMs: finish.completed - finish.started },
    closeMs: last.lastMs - finish.completed,
    serialWorkflowTasks: {
      count: serialTasks.length,
      dispatchMeanMs: mean(serialTasks.map((w) => w.started - w.scheduled)),
      runMeanMs: mean(serialTasks.map((w) => w.completed - w.started)),
    },
    windows: {
      workflow: [first.firstMs, last.lastMs],
      materialize: [materialize.started, materialize.completed],
      chunks: [chunkStart, chunkEnd],
      finish: [finish.started, finish.completed],
    },
  };
}
