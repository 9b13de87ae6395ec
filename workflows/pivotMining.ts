import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { stageActivityOptions } from './activityOptions';
import { pivotMiningProgressQuery } from '../contracts/temporal';
import { DISPATCH_BUDGET_SPENT, NON_RETRYABLE_ERROR_TYPES } from '../contracts/errors';
import { collectRolloutsWorkflow } from './collectRollouts';
import {
  dropEarlyProfiling,
  dropEarlyProfilingAfterCollectFailed,
  dropEarlyProfilingWithoutCandidates,
  fileEarlySamples,
  followEarlyProgress,
  localProfilePrefix,
  startEarlyProfiling,
  type FiledSamples,
} from './earlyProfiling';
import type { PivotMiningInput } from '../contracts/workflowInputs';
import type {
  CollectStageInput,
  CollectStageResult,
  PivotMiningResult,
  RolloutStage,
  RunPlan,
} from '../contracts/payloads';
import { accountingCounts, type RolloutAccounting } from '../gym/rolloutAccounting';

// serve → collect → profile → convert → local-profile → filter/publish, one run per dataset.
// Orchestration only: every file and network touch happens in activities.

const { prepareRun, ensureServers, convertStage, publishStage, workerHostQueue } =
  proxyActivities<PivotActivities>(stageActivityOptions);

const REUSED_CHUNKS_TOGETHER = 'reused-chunks-together';

/** Mixed pivots dropped by a filter rule (pass-rate ceiling, budget, action mix), as publish counts them. */
const RULE_DROPS = ['over_ceiling', 'over_budget', 'over_share'] as const;

/** The collect stage's time budget ran out: the run fails with that reason itself, not "child failed". */
function surfaceBudgetSpent(err: unknown): never {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.type === DISPATCH_BUDGET_SPENT)
    throw ApplicationFailure.nonRetryable(cause.message, DISPATCH_BUDGET_SPENT, ...(cause.details ?? []));
  throw err;
}

/**
 * `servers.mode: spawn`: the server command runs in a heartbeating activity on the task queue of
 * one worker host, for as long as the run needs it. The returned function stops it (and is what
 * cancellation of the workflow triggers too, since the scope is a child of the workflow's).
 */
async function startManagedServers(plan: RunPlan): Promise<() => Promise<void>> {
  const hostQueue = await workerHostQueue(workflowInfo().taskQueue);
  const { runManagedServers } = proxyActivities<PivotActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '30 days',
    heartbeatTimeout: '30 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '5 seconds', maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES },
  });
  const scope = new CancellationScope();
  const running = scope.run(() => runManagedServers({ plan }));
  running.catch(() => undefined);
  return async () => {
    scope.cancel();
    await running.catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
    });
  };
}

export async function pivotMiningWorkflow(input: PivotMiningInput): Promise<PivotMiningResult> {
  const workflowId = workflowInfo().workflowId;
  let plan: RunPlan | undefined;
  let stage = 'prepare';
  let childWorkflowId: string | null = null;
  let prefetchWorkflowId: string | null = null;
  const counts: Record<string, number> = {};
  const accounting: Record<string, RolloutAccounting> = {};
  setHandler(pivotMiningProgressQuery, () => ({
    runId: plan?.runId ?? '',
    runDir: plan?.runDir ?? '',
    stage,
    childWorkflowId,
    prefetchWorkflowId,
    counts: { ...counts },
    accounting: { ...accounting },
  }));

  const earlyProgress = followEarlyProgress();

  plan = await prepareRun(input, workflowId);
  const runPlan = plan;

  const mineWithServers = async (): Promise<PivotMiningResult> => {
    const runChunkedStage = async (
      rolloutStage: RolloutStage,
      inputPath: string,
      more: Pick<CollectStageInput, 'notifyWorkflowId' | 'reusedChunks'> = {},
    ): Promise<CollectStageResult> => {
      stage = rolloutStage;
      childWorkflowId = `${workflowId}/${rolloutStage}`;
      const result = await executeChild(collectRolloutsWorkflow, {
        workflowId: childWorkflowId,
        args: [
          {
            plan: runPlan,
            stage: rolloutStage,
            inputPath,
            outPrefix: rolloutStage === 'collect' ? `${runPlan.runDir}/rollouts` : localProfilePrefix(runPlan),
            ...more,
          },
        ],
      }).catch(surfaceBudgetSpent);
      childWorkflowId = null;
      if (result.accounting) {
        accounting[rolloutStage] = result.accounting;
        Object.assign(counts, accountingCounts(rolloutStage, result.accounting));
      }
      return result;
    };

    const servers = await ensureServers(runPlan);

    // Overlap: local profiling starts on the rollouts collect has finished (docs/architecture.md).
    const prefetch = await startEarlyProfiling(runPlan, `${runPlan.runDir}/rollouts`);
    prefetchWorkflowId = prefetch?.workflowId ?? null;
    const collected = await runChunkedStage(
      'collect',
      runPlan.config.collect.input_jsonl,
      prefetch ? { notifyWorkflowId: prefetch.workflowId } : {},
    ).catch(async (err: unknown) => {
      if (prefetch) await dropEarlyProfilingAfterCollectFailed(runPlan, prefetch, err);
      throw err;
    });
    counts.tasks = collected.materialize.tasks;
    counts.rollouts = collected.merge.completed;
    counts.rollout_failures = collected.merge.failedKeys;
    counts.tasks_all_pass = collected.profile.allPass;
    counts.tasks_all_fail = collected.profile.allFail;
    counts.tasks_mixed = collected.profile.mixed;

    stage = 'convert';
    const converted = await convertStage({
      plan: runPlan,
      rolloutsPath: collected.merge.rolloutsPath,
      rewardProfilePath: collected.profile.rewardProfilingPath,
    });
    counts.positive_trajectories = converted.positiveTrajectories;
    counts.decision_points = converted.decisionPoints;
    counts.candidates = converted.candidates;
    counts.skipped = converted.skipped;
    counts.deduped = converted.deduped;
    if (converted.candidates === 0) {
      if (prefetch) await dropEarlyProfilingWithoutCandidates(runPlan);
      throw ApplicationFailure.nonRetryable(
        `no pivot candidates: ${converted.positiveTrajectories} positive trajectories, ${converted.skipped} decision points skipped (see ${converted.skippedPath})`,
        'NoCandidates',
      );
    }

    let filed: FiledSamples | undefined;
    if (prefetch) {
      // Local profiling already runs: what is left of it is the early segments' tail.
      stage = 'local_profile';
      filed = await fileEarlySamples(runPlan, prefetch, converted.candidatesPath, earlyProgress);
      prefetchWorkflowId = null;
    }
    const reusedChunks = filed?.wholeChunks?.length && patched(REUSED_CHUNKS_TOGETHER) ? filed.wholeChunks : undefined;
    const profiled = await runChunkedStage(
      'local_profile',
      converted.candidatesPath,
      reusedChunks ? { reusedChunks } : {},
    );
    if (prefetch) await dropEarlyProfiling(runPlan, filed);
    const prefetched = filed?.counts;
    counts.local_profile_rollouts = profiled.merge.completed;
    counts.local_profile_failures = profiled.merge.failedKeys;

    stage = 'publish';
    const published = await publishStage({
      plan: runPlan,
      convert: converted,
      localProfilePath: profiled.profile.rewardProfilingPath,
      simulated: servers.simulated,
      funnel: { ...counts },
      accounting: { ...accounting },
    });
    Object.assign(counts, {
      all_pass: published.counts.all_pass ?? 0,
      all_fail: published.counts.all_fail ?? 0,
      mixed: published.counts.mixed ?? 0,
      published: published.counts.published ?? 0,
      ...(published.counts.published_partial !== undefined
        ? { published_partial: published.counts.published_partial }
        : {}),
      ...(published.counts.incomplete !== undefined ? { held_back_incomplete: published.counts.incomplete } : {}),
      // The rules a config may turn on, shown only when they dropped something.
      ...Object.fromEntries(
        RULE_DROPS.filter((rule) => (published.counts[rule] ?? 0) > 0).map((rule) => [rule, published.counts[rule]!]),
      ),
    });
    stage = 'done';
    return {
      runId: runPlan.runId,
      runDir: runPlan.runDir,
      pivotsPath: published.pivotsPath,
      validatorExitCode: published.validatorExitCode,
      gymConfigPath: published.gymConfigPath,
      reportPath: published.reportPath,
      counts: { ...counts },
      accounting: { ...accounting },
      ...(published.runSummaryPath ? { runSummaryPath: published.runSummaryPath } : {}),
      ...(prefetched ? { prefetch: prefetched } : {}),
    };
  };

  stage = 'serve';
  const stopManagedServers = runPlan.config.servers.mode === 'spawn' ? await startManagedServers(runPlan) : undefined;
  try {
    return await mineWithServers();
  } finally {
    // Non-cancellable, so the servers are stopped even when the run itself was cancelled.
    if (stopManagedServers) await CancellationScope.nonCancellable(stopManagedServers);
  }
}
