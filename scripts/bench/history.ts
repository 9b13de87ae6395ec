import type { Client, WorkflowHandle } from '@temporalio/client';

export type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
export type HistoryEvent = NonNullable<History['events']>[number];

// A continued-as-new chain is followed run by run through each run's last event, so every run is
// found without a visibility store and counted, not just the latest. Runs are handed over one at a
// time so a million-rollout chain's events never sit in memory together.

export async function forEachRun<T>(
  client: Client,
  workflowId: string,
  firstRunId: string,
  visit: (events: HistoryEvent[]) => T,
): Promise<T[]> {
  const out: T[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    out.push(visit(events));
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

export async function historyEventsPerRun(client: Client, workflowId: string, firstRunId: string): Promise<number[]> {
  return forEachRun(client, workflowId, firstRunId, (events) => events.length);
}
