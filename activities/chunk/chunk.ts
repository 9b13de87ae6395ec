import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { withEntries, type JsonDict } from '../../gym/kindedJson';
import { metricsStage, stageSettings } from '../../contracts/stageSettings';
import { MAX_REUSED_CHUNKS, type ChunkInput, type ChunkResult } from '../../contracts/payloads';
import { failedAttempts, rolloutKey, rowsToRun, type FailedAttempts } from './chunkRows';
import { buildExecutor } from './chunkExecutor';
import { RequestSpans, timelineServer, writeAttemptSpans } from '../run/engineTimeline';
import { runWindow } from './chunkWindow';
import { retryReusingCachedDeliverable } from './executors/materializedLine';
import { reusesCachedDeliverable } from '../../gym/failureRetry';
import { InvalidJudgeResponse } from './executors/invalidJudge';
import { AgentReportedFailure, DispatchDrained, type MaterializedInput, type RolloutExecutor } from './executors/types';
import { RequestFailure } from '../http/client';
import { nextChunkRank } from '../http/endpointLimiter';
import { withRetries, type FailedAttempt } from '../http/retry';
import type { Fence } from './fence';
import { ChunkAttempt } from './fenceShards';
import { routedFailureRow } from './routedFailure';

// One chunk = one line range of the materialized inputs = one shard. Each attempt writes a shard of
// its own (activities/chunk/fenceShards.ts): a retried chunk (worker killed or cut off, server restarted)
// takes over the older attempts' whole lines and skips keys already there, so nothing is lost and
// nothing is run twice, and an older attempt still running cannot write into the shard the merge
// reads (docs/fencing.md). The merge later orders the shard deterministically.

/** What a chunk attempt reports with each heartbeat and returns. */
type Progress = Omit<ChunkResult, 'chunkIndex'>;

/**
 * The sidecar line of one failed attempt. An agent-reported failure is written as NeMo Gym writes
 * it, the whole keyed result, with our attempt number and class after it; `_ng_no_persist` results
 * are written nowhere. An invalid judge response is the row 0.7.0's migration writes, with the same
 * three after it. A failed request is 0.7.0's row with `route_failures_to_sidecar`, else ours.
 */
function failureLine(
  row: MaterializedInput,
  { attempt, failure }: FailedAttempt,
  routeFailuresToSidecar: boolean,
): JsonDict | undefined {
  if (failure instanceof AgentReportedFailure) {
    if (failure.noPersist) return undefined;
    return withEntries(failure.result, { attempt, failure_class: failure.failureClass, error: failure.message });
  }
  if (failure instanceof InvalidJudgeResponse)
    return withEntries(failure.row, { attempt, failure_class: failure.failureClass, error: failure.message });
  if (routeFailuresToSidecar) return routedFailureRow(row, failure);
  return {
    _ng_task_index: row.task,
    _ng_rollout_index: row.rollout,
    attempt,
    failure_class: failure.failureClass,
    error: failure.message,
  };
}

/** Runs one row with the stage's retries, writing its rollout or each failed attempt to the attempt's shard. */
function rowRunner(
  input: ChunkInput,
  attempt: ChunkAttempt,
  executor: RolloutExecutor,
  { attempts, reuseCachedDeliverable }: FailedAttempts,
  progress: Progress,
): (row: MaterializedInput) => Promise<void> {
  const ctx = Context.current();
  const settings = stageSettings(input.plan, input.stage);
  const signal = ctx.cancellationSignal;
  // Counted as each attempt fails rather than when the chunk ends, so a burst of 429s shows on the
  // worker's metrics while it lasts. With metrics off the meter is a no-op.
  const attemptsFailed = ctx.metricMeter.createCounter(
    'pivot_miner_attempts_failed',
    'attempts',
    'Failed rollout attempts by stage and failure class',
  );
  const { fence } = attempt;
  /** Writes the attempt's sidecar line; resolves to whether its retries re-judge a deliverable. */
  const onFailedAttempt = async (row: MaterializedInput, failedAttempt: FailedAttempt): Promise<boolean> => {
    const line = failureLine(row, failedAttempt, settings.routeFailuresToSidecar);
    if (line) {
      await fence.beforeWrite();
      await attempt.failures.write(line);
    }
    attemptsFailed.add(1, { stage: metricsStage(input), class: failedAttempt.failure.failureClass });
    return line !== undefined && reusesCachedDeliverable(line);
  };
  return async (row) => {
    const k = rolloutKey(row.task, row.rollout);
    // As 0.7.0's resume: once any failed attempt's sidecar line flags its deliverable, every retry says so.
    let posted = reuseCachedDeliverable.has(k) ? retryReusingCachedDeliverable(row) : row;
    const outcome = await withRetries(
      () => executor.run(posted, signal),
      { maxAttempts: settings.maxAttempts },
      async (failedAttempt) => {
        if ((await onFailedAttempt(row, failedAttempt)) && posted === row) posted = retryReusingCachedDeliverable(row);
      },
      signal,
      (attempts.get(k) ?? 0) + 1,
    ).catch((err: unknown) => {
      if (err instanceof DispatchDrained) return undefined;
      throw err;
    });
    if (!outcome) {
      progress.drained = (progress.drained ?? 0) + 1;
      return;
    }
    if (!outcome.ok) {
      progress.failed++;
      return;
    }
    const looking = fence.beforeWrite();
    if (looking) await looking;
    await attempt.rollouts.writeLine(outcome.value);
    progress.completed++;
  };
}

/**
 * The heartbeat, started before anything slow (the head server's agent directory, the takeover's
 * copy) so the 15 s heartbeat timeout never sees a silent start. The fence is looked at with each
 * beat, not per rollout: a write costs a clock read, and an attempt superseded meanwhile writes a
 * second's lines at most, into a file its successor removed.
 */
function startHeartbeat(progress: Progress, fence: () => Fence | undefined): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => {
    ctx.heartbeat(progress);
    fence()
      ?.refresh()
      .catch(() => undefined);
  }, 1000);
  return () => clearInterval(timer);
}

/**
 * Writes when the attempt's requests were in flight, for the engine timeline. A record of timing only:
 * the chunk is done and durable, so failing to write it (a full disk) costs the drawing a chunk, not
 * the chunk a retry.
 */
async function recordRequests(input: ChunkInput, attempt: ChunkAttempt, requests: RequestSpans): Promise<void> {
  if (!input.plan.timelineDir) return;
  try {
    await writeAttemptSpans(
      input.plan.timelineDir,
      { outPrefix: input.outPrefix, chunkIndex: input.chunkIndex, attempt: attempt.fence.token.name },
      { stage: input.stage, server: timelineServer(input.plan, input.stage), spans: requests.spans },
    );
  } catch (err) {
    Context.current().log.warn('engine timeline: chunk record not written', { error: String(err) });
  }
}

/**
 * Lets a stage answer some rows without the engine (early profiling's samples, early/): handed in by
 * whoever registers the activities, so the generic chunk code reads no stage's files of its own.
 */
export type ExecutorWrapper = (
  executor: RolloutExecutor,
  input: ChunkInput,
  onReused: () => void,
) => Promise<RolloutExecutor>;

const plainExecutor: ExecutorWrapper = async (executor) => executor;

/** `secrets` is the worker's environment, where API keys named by `api_key_env` live (never in inputs). */
export async function runChunk(
  secrets: NodeJS.ProcessEnv,
  input: ChunkInput,
  wrapExecutor: ExecutorWrapper = plainExecutor,
): Promise<ChunkResult> {
  // Taken before the first await, so chunks rank in the order their activities started.
  const rank = nextChunkRank();
  const settings = stageSettings(input.plan, input.stage);
  const progress: Progress = { completed: 0, failed: 0, alreadyDone: 0, reused: 0 };
  const requests = new RequestSpans();
  let attempt: ChunkAttempt | undefined;
  const stopHeartbeat = startHeartbeat(progress, () => attempt?.fence);
  try {
    attempt = await ChunkAttempt.open(input.outPrefix, input.chunkIndex);
    try {
      const executor = await wrapExecutor(
        await buildExecutor(secrets, input, rank, input.plan.timelineDir ? requests.record : undefined),
        input,
        () => progress.reused++,
      );
      const failed = failedAttempts(attempt.held, settings.retryTerminalTimeouts);
      // The endpoint limiter caps requests per worker; the window only bounds rows held in memory.
      await runWindow(
        rowsToRun(input, attempt.held, failed, settings, progress),
        settings.maxConcurrency * 2,
        rowRunner(input, attempt, executor, failed, progress),
      );
    } finally {
      await attempt.close();
    }
    await attempt.complete();
    await recordRequests(input, attempt, requests);
  } catch (err) {
    // The SDK reports a CancelledFailure as Temporal expects for the reason: cancelled when the
    // workflow asked, an attempt to retry when an operator paused or reset the activity
    // (`temporal activity pause|reset`). Any other failure here would end the chunk, and the run.
    if (err instanceof RequestFailure && err.failureClass === 'cancelled')
      throw new CancelledFailure('chunk cancelled');
    throw err;
  } finally {
    stopHeartbeat();
  }
  return { chunkIndex: input.chunkIndex, ...progress };
}

/**
 * Chunks [chunkIndex, toChunk) whose every row an early sample answers (overlap): they make no
 * request, so one activity runs them one after another, each as an attempt of its own, where an
 * activity each would spend more on its dispatch than on its chunk.
 */
export async function runReusedChunks(
  secrets: NodeJS.ProcessEnv,
  input: ChunkInput & { toChunk: number },
  wrapExecutor: ExecutorWrapper = plainExecutor,
): Promise<Array<ChunkResult & { durationMs: number }>> {
  const { toChunk, ...first } = input;
  if (toChunk - first.chunkIndex > MAX_REUSED_CHUNKS)
    throw new Error(`runReusedChunks: ${toChunk - first.chunkIndex} chunks, at most ${MAX_REUSED_CHUNKS}`);
  const results: Array<ChunkResult & { durationMs: number }> = [];
  for (let chunkIndex = first.chunkIndex; chunkIndex < toChunk; chunkIndex++) {
    const started = performance.now();
    const result = await runChunk(secrets, { ...first, chunkIndex }, wrapExecutor);
    // Each chunk's own time, for the worker's chunk duration metric.
    results.push({ ...result, durationMs: Math.round(performance.now() - started) });
  }
  return results;
}
