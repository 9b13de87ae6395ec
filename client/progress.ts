import type { Client, WorkflowHandle } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { PivotMiningProgress, PrefetchProgress, StageProgress } from '../contracts/payloads';
import { pivotMiningProgressQuery, prefetchProgressQuery, stageProgressQuery } from '../contracts/temporal';
// Types only: the client queries workflows by name, so no workflow code is loaded into it.
import type { pivotMiningWorkflow } from '../workflows';

// What a watcher of a mining run sees (getProgress): the run's own numbers from its query, and
// what Temporal knows about it that the workflow does not report: its status, the activities of
// the run and of its child workflows that wait to be tried again, and why a failed run failed.

/** An activity of the run that failed and waits for Temporal to try it again. */
export interface ActivityRetry {
  /** The run's workflow, or the stage's child workflow the activity belongs to. */
  workflowId: string;
  activityType: string;
  /** The attempt that runs next. */
  attempt: number;
  lastFailure: string;
  /** When Temporal schedules that attempt; null once it has started. */
  nextAttemptAt: Date | null;
}

export interface MiningProgress extends PivotMiningProgress {
  status: string;
  /** Live numbers of the chunked stage running now, when there is one. */
  childStage: StageProgress | null;
  /** What the run waits for: its activities that failed and will be tried again (a full disk, a down server). */
  waiting: ActivityRetry[];
  /** Local profiling running beside collect (`overlap: true`): its counts, and its running segments' live numbers. */
  early: EarlyProfiling | null;
  /** Why a FAILED run failed: the innermost message of its failure (e.g. `collect.dispatch_budget_s ... ran out`). */
  failure: string | null;
}

/** The innermost message down an error's cause chain: a failed run's reason, under "Workflow execution failed". */
function innermostMessage(err: unknown): string {
  let message = String(err);
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.message !== '') message = e.message;
  return message;
}

export interface EarlyProfiling extends PrefetchProgress {
  /** Samples done and expected in the segments running now. */
  runningDone: number;
  runningTotal: number;
}

/** The early profiling's counts, and its running segments' samples; null when there is none now. */
async function earlyProfiling(client: Client, workflowId: string): Promise<EarlyProfiling | null> {
  const progress = await client.workflow
    .getHandle(workflowId)
    .query(prefetchProgressQuery)
    .catch(() => null);
  if (!progress) return null;
  const stages = await Promise.all(
    progress.running.map((id) =>
      client.workflow
        .getHandle(id)
        .query(stageProgressQuery)
        .catch(() => null),
    ),
  );
  const live = stages.filter((stage) => stage !== null);
  return {
    ...progress,
    runningDone: live.reduce((sum, stage) => sum + stage.done, 0),
    runningTotal: live.reduce((sum, stage) => sum + stage.total, 0),
  };
}

type Described = Awaited<ReturnType<WorkflowHandle['describe']>>;

/** The pending activities of a workflow that have failed at least once. */
function activityRetries(workflowId: string, described: Described | undefined): ActivityRetry[] {
  return (described?.raw.pendingActivities ?? []).flatMap((a) =>
    a.lastFailure?.message
      ? [
          {
            workflowId,
            activityType: a.activityType?.name ?? '?',
            attempt: a.attempt ?? 1,
            lastFailure: a.lastFailure.message,
            nextAttemptAt: optionalTsToDate(a.nextAttemptScheduleTime) ?? null,
          },
        ]
      : [],
  );
}

/** The pending activities of these workflows that have failed at least once; one gone is skipped. */
async function retriesOf(client: Client, workflowIds: string[]): Promise<ActivityRetry[]> {
  const described = await Promise.all(
    workflowIds.map((id) =>
      client.workflow
        .getHandle(id)
        .describe()
        .catch(() => undefined),
    ),
  );
  return described.flatMap((d, i) => activityRetries(workflowIds[i]!, d));
}

export async function getProgress(client: Client, workflowId: string): Promise<MiningProgress> {
  const handle = client.workflow.getHandle<typeof pivotMiningWorkflow>(workflowId);
  const described = await handle.describe();
  const status = described.status.name;
  const progress = await handle.query(pivotMiningProgressQuery);
  let childStage: StageProgress | null = null;
  const waiting: ActivityRetry[] = [];
  if (status === 'RUNNING') {
    waiting.push(...activityRetries(workflowId, described));
    if (progress.childWorkflowId) {
      // The child may be between continue-as-new runs or already finished: no live numbers then.
      const child = client.workflow.getHandle(progress.childWorkflowId);
      childStage = await child.query(stageProgressQuery).catch(() => null);
      waiting.push(...activityRetries(child.workflowId, await child.describe().catch(() => undefined)));
    }
  }
  const early =
    status === 'RUNNING' && progress.prefetchWorkflowId
      ? await earlyProfiling(client, progress.prefetchWorkflowId)
      : null;
  // Early profiling's steps and its segments' chunks wait on the same disk and engines as the run's own.
  if (early && progress.prefetchWorkflowId)
    waiting.push(...(await retriesOf(client, [progress.prefetchWorkflowId, ...early.running])));
  const failure =
    status === 'FAILED'
      ? await handle.result().then(
          () => null,
          (err: unknown) => innermostMessage(err),
        )
      : null;
  return { ...progress, status, childStage, waiting, early, failure };
}
