import type { Client, WorkflowHandle } from '@temporalio/client';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

// A continued-as-new chain is followed run by run through each run's last event, so the count per
// run needs no visibility store and includes every run, not just the latest.

export async function historyEventsPerRun(client: Client, workflowId: string, firstRunId: string): Promise<number[]> {
  const counts: number[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    counts.push(events.length);
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return counts;
}
