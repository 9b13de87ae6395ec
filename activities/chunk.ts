import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { JsonlWriter, readJsonl, readLines, truncateTornTail } from '../gym/jsonl';
import { syncDir, syncFile } from '../gym/durable';
import { withEntries, type JsonDict } from '../gym/kindedJson';
import { ConfigError } from '../contracts/errors';
import { stageSettings } from '../contracts/stageSettings';
import type { ChunkInput, ChunkResult } from '../contracts/payloads';
import { chunkRange, materializedInputsPath, readMaterializedMeta } from './chunkIndex';
import { gymAgentExecutor } from './executors/gymAgent';
import { MaterializedLine } from './executors/materializedLine';
import { singleStepExecutor } from './executors/singleStep';
import {
  AgentReportedFailure,
  isTerminalFailureLine,
  type MaterializedInput,
  type RolloutExecutor,
} from './executors/types';
import { RequestFailure } from './http/client';
import { nextChunkRank } from './http/endpointLimiter';
import { withRetries, type FailedAttempt } from './http/retry';
import { agentDirectory, resolveEndpoints, unknownAgentReason } from './servers';
import { parseShardLine } from './shardLines';
import { currentAttempt, Fence } from './fence';
import { attemptFiles, chunkAttemptsDir, takeOverOlderAttempts, type AttemptFiles } from './fenceShards';

// One chunk = one line range of the materialized inputs = one shard. Each attempt writes a shard of
// its own (activities/fenceShards.ts): a retried chunk (worker killed or cut off, server restarted)
// takes over the older attempts' whole lines and skips keys already there, so nothing is lost and
// nothing is run twice, and an older attempt still running cannot write into the shard the merge
// reads (docs/fencing.md). The merge later orders the shard deterministically.

const key = (t: number, r: number) => `${t}:${r}`;

type ShardLine = Record<string, unknown> & { _ng_task_index: number; _ng_rollout_index: number };

/** Drops a shard's torn tail; false when the shard does not exist yet. */
async function repairShard(file: string): Promise<boolean> {
  try {
    await truncateTornTail(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Reads a failure shard's keyed lines; a shard that does not exist yet is empty. */
async function* readShard(file: string): AsyncGenerator<ShardLine> {
  if (!(await repairShard(file))) return;
  for await (const { value } of readJsonl(file)) yield value as ShardLine;
}

/** The keys a rollout shard holds, read from the digests at the start of its lines. */
async function readShardKeys(file: string): Promise<Set<string>> {
  const keys = new Set<string>();
  if (!(await repairShard(file))) return keys;
  for await (const line of readLines(file)) {
    if (line.text === '') continue;
    const entry = parseShardLine(line);
    keys.add(key(entry.task, entry.rollout));
  }
  return keys;
}

/** Failed attempts per key, and the keys never to retry, read as NeMo Gym's `_load_from_cache` reads its sidecar. */
async function readFailedAttempts(file: string): Promise<{ attempts: Map<string, number>; terminal: Set<string> }> {
  const attempts = new Map<string, number>();
  const terminal = new Set<string>();
  for await (const v of readShard(file)) {
    const k = key(v._ng_task_index, v._ng_rollout_index);
    attempts.set(k, (attempts.get(k) ?? 0) + 1);
    if (isTerminalFailureLine(v)) terminal.add(k);
  }
  return { attempts, terminal };
}

/**
 * The sidecar line of one failed attempt. An agent-reported failure is written as NeMo Gym writes
 * it, the whole keyed result, with our attempt number and class after it; `_ng_no_persist` results
 * are written nowhere.
 */
function failureLine(input: MaterializedInput, { attempt, failure }: FailedAttempt): JsonDict | undefined {
  if (failure instanceof AgentReportedFailure) {
    if (failure.noPersist) return undefined;
    return withEntries(failure.result, { attempt, failure_class: failure.failureClass, error: failure.message });
  }
  return {
    _ng_task_index: input.task,
    _ng_rollout_index: input.rollout,
    attempt,
    failure_class: failure.failureClass,
    error: failure.message,
  };
}

async function buildExecutor(secrets: NodeJS.ProcessEnv, input: ChunkInput, rank: number): Promise<RolloutExecutor> {
  const { plan, stage } = input;
  const settings = stageSettings(plan, stage);
  if (stage === 'collect') {
    return gymAgentExecutor({
      agentUrls: await agentDirectory(plan),
      timeoutMs: settings.requestTimeoutMs,
      maxConcurrency: settings.maxConcurrency,
      rank,
    });
  }
  const lp = plan.config.local_profile;
  if (lp.verifier === 'nemo_gym_agent') {
    const agentName = lp.agent_name ?? settings.agentName;
    const agentUrls = await agentDirectory(plan);
    if (!agentUrls.has(agentName))
      throw new ConfigError(`local_profile.agent_name: ${unknownAgentReason(plan, agentName, agentUrls)}`);
    return gymAgentExecutor({
      agentUrls,
      agentName,
      timeoutMs: settings.requestTimeoutMs,
      maxConcurrency: settings.maxConcurrency,
      rank,
    });
  }
  const endpoints = await resolveEndpoints(plan);
  const model = lp.model;
  let apiKey: string | undefined;
  if (model.api_key_env) {
    apiKey = secrets[model.api_key_env];
    if (!apiKey)
      throw new ConfigError(
        `local_profile.model.api_key_env names ${model.api_key_env}, which is not set in this worker's environment`,
      );
  }
  return singleStepExecutor({
    modelUrl: endpoints.modelUrl,
    api: endpoints.modelApi,
    model: endpoints.modelName,
    apiKey,
    timeoutMs: Math.min(settings.requestTimeoutMs, model.timeout_ms),
    maxConcurrency: Math.min(settings.maxConcurrency, model.max_concurrency),
    comparatorConfig: lp.tool_call_comparator_config,
    unpackExtraBody: model.unpack_extra_body,
    rank,
  });
}

/** The chunk's shard on stable storage before it is reported done: its files, the attempts directory and the directories above it that this attempt may have created. */
async function syncShard(own: AttemptFiles, dir: string): Promise<void> {
  await syncFile(own.rollouts);
  await syncFile(own.failures);
  // The sidecar exists only when this attempt took over an older one.
  await syncFile(own.superseded).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await syncDir(dir);
  await syncDir(path.dirname(dir));
  await syncDir(path.dirname(path.dirname(dir)));
}

/** `secrets` is the worker's environment, where API keys named by `api_key_env` live (never in inputs). */
export async function runChunk(secrets: NodeJS.ProcessEnv, input: ChunkInput): Promise<ChunkResult> {
  const { plan, stage, outPrefix, chunkIndex } = input;
  // Taken before the first await, so chunks rank in the order their activities started.
  const rank = nextChunkRank();
  const ctx = Context.current();
  const settings = stageSettings(plan, stage);
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  const range = await chunkRange(outPrefix, chunkIndex, meta.chunkSize);

  const dir = chunkAttemptsDir(outPrefix, chunkIndex);
  await mkdir(dir, { recursive: true });
  const fence = new Fence(dir, currentAttempt(), `chunk ${chunkIndex} of ${outPrefix}`);
  // Looked at before this attempt creates anything, so one that starts after its successor leaves no trace.
  await fence.check();
  const own = attemptFiles(dir, fence.token);
  await repairShard(own.rollouts);
  await repairShard(own.failures);
  await appendFile(own.rollouts, '');
  await fence.checkClaimed(Object.values(own));
  await takeOverOlderAttempts(fence, own, outPrefix, chunkIndex);
  const rolloutShard = own.rollouts;
  const failureShard = own.failures;
  const done = await readShardKeys(rolloutShard);
  const { attempts: failedAttempts, terminal } = await readFailedAttempts(failureShard);
  const executor = await buildExecutor(secrets, input, rank);

  const rollouts = await JsonlWriter.open(rolloutShard, { append: true });
  const failures = await JsonlWriter.open(failureShard, { append: true });
  const signal = ctx.cancellationSignal;
  // Counted as each attempt fails rather than when the chunk ends, so a burst of 429s shows on the
  // worker's metrics while it lasts. With metrics off the meter is a no-op.
  const attemptsFailed = ctx.metricMeter.createCounter(
    'pivot_miner_attempts_failed',
    'attempts',
    'Failed rollout attempts by stage and failure class',
  );
  let completed = 0;
  let failed = 0;
  let alreadyDone = 0;

  async function runRow(input: MaterializedInput): Promise<void> {
    const k = key(input.task, input.rollout);
    const priorAttempts = failedAttempts.get(k) ?? 0;
    const outcome = await withRetries(
      () => executor.run(input, signal),
      { maxAttempts: settings.maxAttempts },
      async (failed) => {
        const line = failureLine(input, failed);
        if (line) {
          await fence.beforeWrite();
          await failures.write(line);
        }
        attemptsFailed.add(1, { stage, class: failed.failure.failureClass });
      },
      signal,
      priorAttempts + 1,
    );
    if (outcome.ok) {
      const looking = fence.beforeWrite();
      if (looking) await looking;
      await rollouts.writeLine(outcome.value);
      completed++;
    } else {
      failed++;
    }
  }

  // The fence is looked at with each heartbeat, not per rollout: a write costs a clock read, and an
  // attempt superseded meanwhile writes a second's lines at most, into a file its successor removed.
  const heartbeatTimer = setInterval(() => {
    ctx.heartbeat({ completed, failed, alreadyDone });
    fence.refresh().catch(() => undefined);
  }, 1000);
  try {
    const inFlight = new Set<Promise<void>>();
    // Row failures that escape withRetries (cancellation, a bug) are kept and rethrown here rather
    // than left as unhandled rejections, which would take the whole worker down.
    let rowFailure: { error: unknown } | undefined;
    // A full window waits for the next row to finish through one promise; Promise.race over the
    // window would subscribe to every row in it on each wait, a promise apiece (an in-process stage
    // made 135 promises a rollout with it, 108 without).
    let slotFreed: (() => void) | undefined;
    const rowFinished = (task: Promise<void>): void => {
      inFlight.delete(task);
      slotFreed?.();
      slotFreed = undefined;
    };
    const inputsPath = materializedInputsPath(outPrefix);
    // The meta file (read above) says materializeStage finished writing these lines.
    for await (const { text, line } of readLines(inputsPath, {
      start: range.start,
      end: range.end,
      firstLine: range.firstLine,
    })) {
      if (text === '') continue;
      const input = new MaterializedLine(text, inputsPath, line);
      const k = key(input.task, input.rollout);
      if (done.has(k) || terminal.has(k) || (failedAttempts.get(k) ?? 0) >= settings.maxAttempts) {
        alreadyDone++;
        continue;
      }
      const task: Promise<void> = runRow(input).then(
        () => rowFinished(task),
        (err: unknown) => {
          rowFailure ??= { error: err };
          rowFinished(task);
        },
      );
      inFlight.add(task);
      // The endpoint limiter caps requests per worker; this only bounds rows held in memory.
      if (inFlight.size >= settings.maxConcurrency * 2) await new Promise<void>((resolve) => (slotFreed = resolve));
      if (rowFailure) break;
    }
    await Promise.all(inFlight);
    if (rowFailure) throw rowFailure.error;
  } catch (err) {
    if (err instanceof RequestFailure && err.failureClass === 'cancelled')
      throw ApplicationFailure.create({ message: 'chunk cancelled', nonRetryable: true });
    throw err;
  } finally {
    clearInterval(heartbeatTimer);
    await rollouts.close();
    await failures.close();
  }
  // A superseded attempt's result would be refused by Temporal anyway; failing says why in its log.
  await fence.check();
  await syncShard(own, dir);
  return { chunkIndex, completed, failed, alreadyDone };
}
