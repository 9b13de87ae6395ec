import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import Long from 'long';
import type { temporal } from '@temporalio/proto';
import type { CollectStageResult } from '../../contracts/payloads';
import { assertSameStageFiles, collectStageTest } from '../helpers/collectStage';

// An operator's `temporal workflow reset` of a collect stage on a real dev server, twice: to its
// last workflow task while chunks are in flight and a merge has completed, then to the workflow
// task before its first merge was scheduled. The reset runs keep the old runs' scheduled times and
// count attempts from one again (docs/fencing.md, "The token"); the stage must complete and write
// the bytes of an undisturbed run.

const stage = collectStageTest('workflow-reset', {
  // Every agent request answers 300 ms late once, so chunks are in flight when the operator acts.
  servers: { mode: 'embedded', faults: { agent: { rate: 1, kinds: ['slow'], slow_ms: 300 } } },
  collect: {
    input_jsonl: 'configs/demo_tasks.jsonl',
    agent_name: 'demo_tool_agent',
    num_repeats: 2,
    chunk_size: 2,
    max_chunks_in_flight: 4,
    max_concurrency: 4,
  },
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function events(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

const eventId = (e: HistoryEvent): number => Number(e.eventId);

/** Waits until the current run's history satisfies `ready`. */
async function waitFor(handle: WorkflowHandle, what: string, ready: (history: HistoryEvent[]) => boolean) {
  for (let waited = 0; waited < 120_000; waited += 50) {
    if (ready(await events(handle))) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** `temporal workflow reset --event-id <id>` of the current run. */
async function reset(handle: WorkflowHandle, workflowTaskFinishEventId: number): Promise<string> {
  const { runId } = (await handle.describe()) as { runId: string };
  const response: temporal.api.workflowservice.v1.IResetWorkflowExecutionResponse =
    await stage.stack.env.client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId, runId },
      reason: 'operator reset in a test',
      workflowTaskFinishEventId: Long.fromNumber(workflowTaskFinishEventId),
      requestId: randomUUID(),
    });
  return response.runId ?? '';
}

const scheduled = (history: HistoryEvent[], type: string) =>
  history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
const completedMerges = (history: HistoryEvent[]) => {
  const merges = new Set(scheduled(history, 'mergeChunks').map(eventId));
  return history.filter((e) => merges.has(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1)));
};

test(
  'a collect stage reset by an operator mid-chunks and before its first merge writes the undisturbed bytes',
  { timeout: 600_000 },
  async () => {
    const reference = stage.input('reference');
    await (await stage.start('reset-reference', reference)).result();

    const subject = stage.input('reset');
    const handle = await stage.start('reset-me', subject);
    const latest = stage.stack.env.client.workflow.getHandle('reset-me');
    // First: the last workflow task, with a merge completed and chunks still running.
    await waitFor(latest, 'a merge completed', (h) => completedMerges(h).length >= 1);
    const history = await events(latest);
    const lastTask = history.filter((e) => e.workflowTaskCompletedEventAttributes).at(-1)!;
    const newRun = await reset(latest, eventId(lastTask));
    assert.notEqual(newRun, handle.firstExecutionRunId);
    // Then: the workflow task before the first merge was scheduled, in the run the first reset made.
    // Its first merge too: when the first reset's task was the one that scheduled the merge, the reset
    // dropped that command, and the new run schedules the merge again only once it has replayed.
    await waitFor(
      latest,
      'chunks and a merge of the reset run are scheduled',
      (h) => scheduled(h, 'runChunk').length > 4 && scheduled(h, 'mergeChunks').length > 0,
    );
    const resetHistory = await events(latest);
    const firstMerge = eventId(scheduled(resetHistory, 'mergeChunks')[0]!);
    const beforeMerge = resetHistory
      .filter((e) => e.workflowTaskCompletedEventAttributes && eventId(e) < firstMerge)
      .at(-1)!;
    await reset(latest, eventId(beforeMerge));

    const result = (await latest.result()) as CollectStageResult;
    assert.equal(result.merge.completed, 40);
    assertSameStageFiles(subject, reference);
  },
);
