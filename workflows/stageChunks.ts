import {
  ApplicationFailure,
  continueAsNew,
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
  type MaterializeResult,
  type MergeProgress,
} from '../contracts/payloads';
import { MergeFrontier } from './mergeFrontier';
import { ChunkNotifier } from './chunkNotifier';
import type { RolloutAccounting } from '../gym/rolloutAccounting';

// A chunked stage up to its last chunk: materialize, the chunks, and the merges that keep pace with
// them. The stages (workflows/collectRollouts.ts) and early profiling's segments
// (workflows/earlySegment.ts) differ only in what follows.

const { materializeStage, mergeChunks } = proxyActivities<PivotActivities>(collectStageActivityOptions);

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

/** What `pivot-miner status` shows of a stage; the workflow moves it along as it goes. */
export interface StageProgress {
  phase: string;
  done: number;
  failed: number;
  total: number;
  /** Workflow time, kept across continue-as-new, so no restart moves the dispatch deadline. */
  startedAtMs: number;
  accounting?: RolloutAccounting;
}

/** The stage's progress, answered to stageProgressQuery from here on. */
export function trackProgress(input: CollectStageInput): StageProgress {
  const progress: StageProgress = {
    phase: input.resume ? 'chunks' : 'materialize',
    done: input.resume?.done ?? 0,
    failed: input.resume?.failed ?? 0,
    total: input.resume?.materialize.rows ?? 0,
    startedAtMs: input.resume?.startedAtMs ?? Date.now(),
  };
  setHandler(stageProgressQuery, () => {
    const { done, total, failed, accounting } = progress;
    const elapsed = Math.max(1, (Date.now() - progress.startedAtMs) / 1000);
    const rate = done / elapsed;
    return {
      stage: `${input.stage}:${progress.phase}`,
      done,
      total,
      failed,
      rolloutsPerSecond: Math.round(rate * 100) / 100,
      etaSeconds: rate > 0 && total > done ? Math.round((total - done) / rate) : null,
      ...(accounting ? { accounting } : {}),
    };
  });
  return progress;
}

export interface StageChunks {
  materialize: MaterializeResult;
  /** What the merges during the chunks took; the last chunk's merge is left to the stage's tail. */
  merged: MergeProgress;
  /** Tells early profiling how far collect's chunks finished, when the stage was asked to. */
  notifier?: ChunkNotifier;
}

/**
 * Materializes the stage and runs its chunks, merging as they finish. Continues as new (this workflow
 * again, with the progress so far) when the history grows past its limit, and fails when
 * `collect.dispatch_budget_s` ran out.
 */
export async function runStageChunks(input: CollectStageInput, progress: StageProgress): Promise<StageChunks> {
  const settings = stageSettings(input.plan, input.stage);
  const budgetS = settings.dispatchBudgetS;
  const deadlineMs = budgetS === undefined ? undefined : progress.startedAtMs + budgetS * 1000;
  let drained = 0;
  const dispatchStopped = () => drained > 0 || (deadlineMs !== undefined && Date.now() >= deadlineMs);

  const materialize = input.resume?.materialize ?? (await materializeStage(input));
  progress.total = materialize.rows;
  progress.phase = 'chunks';

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
    progress.done += r.completed + r.failed + r.alreadyDone;
    progress.failed += r.failed;
    // The last chunk is left to the stage's tail, so the tail after the chunk span is one activity, not two.
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
  const { done, failed, total, startedAtMs } = progress;
  if (budgetS !== undefined && dispatchStopped() && done < total) {
    progress.phase = 'budget_spent';
    await notifier?.drain();
    throw budgetSpent(budgetS, total, total - done);
  }
  if (next < materialize.chunks) {
    await notifier?.drain();
    await continueAsNew<(input: CollectStageInput) => Promise<unknown>>({
      ...input,
      resume: { materialize, nextChunk: next, done, failed, startedAtMs, merged },
    });
  }
  return { materialize, merged, ...(notifier ? { notifier } : {}) };
}
