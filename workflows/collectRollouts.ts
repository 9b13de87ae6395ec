import {
  ApplicationFailure,
  continueAsNew,
  deprecatePatch,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { chunksFinishedSignal, stageProgressQuery } from '../contracts/temporal';
import { DISPATCH_BUDGET_SPENT } from '../contracts/errors';
import { collectStageActivityOptions, chunkActivityOptions } from './activityOptions';
import { stageSettings } from '../contracts/stageSettings';
import {
  MAX_REUSED_CHUNKS,
  NOTHING_MERGED,
  type ChunkResult,
  type CollectStageInput,
  type CollectStageResult,
} from '../contracts/payloads';
import { MergeFrontier } from './mergeFrontier';
import { ChunkNotifier } from './chunkNotifier';
import type { RolloutAccounting } from '../gym/rolloutAccounting';

// collect → profile as one reusable sub-pipeline (docs/architecture.md): the collect stage runs it with the
// agent executor, local profiling runs it on pivot candidates with the single-step executor.

const { materializeStage, mergeChunks, finishStage, stageAccounting } =
  proxyActivities<PivotActivities>(collectStageActivityOptions);

const { runChunk, runReusedChunks } = proxyActivities<PivotActivities>(chunkActivityOptions);

/**
 * Where the run of wholly reused chunks that starts at `chunk` ends, or undefined when none starts
 * there. A range is shared evenly among the activities in flight, so their waits on the disk overlap.
 */
function reusedRunEnd(input: CollectStageInput, chunk: number, inFlight: number): number | undefined {
  const range = input.reusedChunks?.find(([from, to]) => from <= chunk && chunk < to);
  if (!range) return undefined;
  const share = Math.ceil((range[1] - range[0]) / inFlight);
  return Math.min(range[1], chunk + Math.min(share, MAX_REUSED_CHUNKS));
}

const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 4000;

/**
 * The end of a stage stopped by `collect.dispatch_budget_s`: nothing is merged for good or published,
 * and the same run id resumes with the rows left (docs/nemo-gym.md, 0.7.0 collection options).
 */
function budgetSpent(budgetS: number, total: number, left: number): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `collect.dispatch_budget_s (${budgetS} s) ran out: ${left} of ${total} rollouts were not started, and nothing ` +
      `was published; start the run again with the same run id to run them (the ${total - left} done are kept)`,
    DISPATCH_BUDGET_SPENT,
    { rows: total, rowsLeft: left },
  );
}

// Patches whose old branches are retired the way Temporal documents: each patched() became a
// deprecatePatch() at the same place, so histories recorded with the patches still replay, and
// histories begun before them (which took the old branches) cannot. Once no open history was
// recorded before this release, the deprecatePatch() calls go too.
const MERGE_DURING_CHUNKS = 'merge-during-chunks';
const FINISH_IN_ONE_ACTIVITY = 'finish-stage-in-one-activity';
const ROLLOUT_ACCOUNTING = 'rollout-accounting';

export async function collectRolloutsWorkflow(input: CollectStageInput): Promise<CollectStageResult> {
  deprecatePatch(MERGE_DURING_CHUNKS);
  const settings = stageSettings(input.plan, input.stage);
  const startedAtMs = input.resume?.startedAtMs ?? Date.now();
  let done = input.resume?.done ?? 0;
  let failed = input.resume?.failed ?? 0;
  let total = input.resume?.materialize.rows ?? 0;
  let phase = input.resume ? 'chunks' : 'materialize';
  // Workflow time, kept across continue-as-new in startedAtMs, so no restart moves the deadline.
  const budgetS = settings.dispatchBudgetS;
  const deadlineMs = budgetS === undefined ? undefined : startedAtMs + budgetS * 1000;
  let drained = 0;
  const dispatchStopped = () => drained > 0 || (deadlineMs !== undefined && Date.now() >= deadlineMs);
  let accounting: RolloutAccounting | undefined;

  setHandler(stageProgressQuery, () => {
    const elapsed = Math.max(1, (Date.now() - startedAtMs) / 1000);
    const rate = done / elapsed;
    return {
      stage: `${input.stage}:${phase}`,
      done,
      total,
      failed,
      rolloutsPerSecond: Math.round(rate * 100) / 100,
      etaSeconds: rate > 0 && total > done ? Math.round((total - done) / rate) : null,
      ...(accounting ? { accounting } : {}),
    };
  });

  const materialize = input.resume?.materialize ?? (await materializeStage(input));
  total = materialize.rows;
  phase = 'chunks';

  // A sliding window of chunk activities: enough in flight to keep the servers busy, few enough that
  // a workflow's history grows by a handful of events per chunk.
  const historyLimit = input.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= historyLimit;
  let next = input.resume?.nextChunk ?? 0;
  const frontier = new MergeFrontier(input.resume?.merged ?? NOTHING_MERGED, next, (from, to) =>
    mergeChunks({ outPrefix: input.outPrefix, from, to }),
  );
  const notifyId = input.notifyWorkflowId;
  const notifier = notifyId
    ? new ChunkNotifier(next, (chunks, final) =>
        getExternalWorkflowHandle(notifyId).signal(chunksFinishedSignal, { chunks, final }),
      )
    : undefined;
  // Keyed by the first chunk of what one activity runs: a chunk, or a run of wholly reused chunks.
  const inFlight = new Map<number, Promise<ChunkResult[]>>();
  const startChunks = (chunkIndex: number): Promise<ChunkResult[]> => {
    const chunk = {
      plan: input.plan,
      stage: input.stage,
      outPrefix: input.outPrefix,
      chunkIndex,
      ...(deadlineMs === undefined ? {} : { dispatchDeadlineMs: deadlineMs }),
    };
    const reusedEnd = reusedRunEnd(input, chunkIndex, settings.maxChunksInFlight);
    if (reusedEnd === undefined) return runChunk(chunk).then((r) => [r]);
    next = reusedEnd;
    return runReusedChunks({ ...chunk, toChunk: reusedEnd });
  };
  const onChunkDone = (r: ChunkResult) => {
    // A chunk with rows left is not finished for early profiling, which then sees only whole chunks.
    if (r.drained) drained += r.drained;
    else notifier?.chunkFinished(r.chunkIndex);
    done += r.completed + r.failed + r.alreadyDone;
    failed += r.failed;
    // The last chunk is left to finishStage, so the tail after the chunk span is one activity, not two.
    const lastChunk = next >= materialize.chunks && inFlight.size === 0;
    if (mustContinueAsNew() || lastChunk) frontier.hold();
    frontier.chunkFinished(r.chunkIndex);
  };
  while (next < materialize.chunks || inFlight.size > 0) {
    while (
      next < materialize.chunks &&
      inFlight.size < settings.maxChunksInFlight &&
      !mustContinueAsNew() &&
      !dispatchStopped()
    ) {
      const chunkIndex = next++;
      inFlight.set(chunkIndex, startChunks(chunkIndex));
    }
    if (inFlight.size === 0) break;
    const merging = frontier.pending;
    const finished = await Promise.race<ChunkResult[] | void>(
      merging ? [...inFlight.values(), merging] : inFlight.values(),
    );
    if (finished) {
      inFlight.delete(finished[0]!.chunkIndex);
      finished.forEach(onChunkDone);
    }
  }
  const merged = await frontier.drain();
  if (budgetS !== undefined && dispatchStopped() && done < total) {
    phase = 'budget_spent';
    await notifier?.drain();
    throw budgetSpent(budgetS, total, total - done);
  }
  if (next < materialize.chunks) {
    await notifier?.drain();
    await continueAsNew<typeof collectRolloutsWorkflow>({
      ...input,
      resume: { materialize, nextChunk: next, done, failed, startedAtMs, merged },
    });
  }

  // Told beside the finish, which early profiling does not wait for: it reads the chunks themselves.
  const told = notifier?.finish(materialize.chunks);
  const { plan, stage, outPrefix } = input;
  phase = 'finish';
  deprecatePatch(FINISH_IN_ONE_ACTIVITY);
  const { merge, profile } = await finishStage({
    plan,
    stage,
    outPrefix,
    merged,
    allowPartialRollouts: settings.allowPartialRollouts,
  });
  await told;
  deprecatePatch(ROLLOUT_ACCOUNTING);
  phase = 'accounting';
  accounting = await stageAccounting({ plan, stage, outPrefix });
  phase = 'done';
  return { materialize, merge, profile, accounting };
}
