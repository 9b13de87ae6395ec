import { setTimeout as sleep } from 'node:timers/promises';
import { CancelledFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import type { z } from 'zod';
import { describeIssues } from '../contracts/config';
import { InvalidInputError } from '../contracts/errors';
import type { PivotMiningProgress, PivotMiningResult, StageProgress } from '../contracts/payloads';
import type { CurriculumRound, NightlyMiningResult, PolicyCheckpoint } from '../contracts/poolPayloads';
import { curriculumPoolQuery, DEFAULT_TASK_QUEUE, policyCheckpointUpdate, roundsQuery } from '../contracts/temporal';
import {
  pivotCurriculumInputSchema,
  pivotMiningInputSchema,
  policyCheckpointSchema,
  type PivotCurriculumInput,
  type PivotMiningInput,
} from '../contracts/workflowInputs';
// Types only: the client starts workflows by type name, so no workflow code is loaded into it.
import type { pivotCurriculumWorkflow, pivotMiningWorkflow } from '../workflows';
import { taskQueueFromEnv } from '../workers/connection';
import { getProgress, type MiningProgress } from './progress';

// The typed API a training platform (and the CLI) uses, the package's `main`: connect as the
// workers do, start a mining run, watch it, wait for its dataset or cancel it, and feed policy
// checkpoints to a running pivot curriculum. Inputs are validated here with the same zod schemas
// the worker uses, so a bad request fails before anything starts.

export * from './connect';
export * from './progress';
export * from './schedules';
export { DEFAULT_TASK_QUEUE, InvalidInputError, taskQueueFromEnv };
export type {
  CurriculumRound,
  NightlyMiningResult,
  PivotCurriculumInput,
  PivotMiningInput,
  PivotMiningProgress,
  PivotMiningResult,
  PolicyCheckpoint,
  StageProgress,
};

export interface StartOptions {
  workflowId: string;
  /** Default: PIVOT_MINER_TASK_QUEUE, else `pivot-mining`, as the workers choose theirs. */
  taskQueue?: string;
}

/** Starts `workflowType` with `input` once it passes `schema`, the schema the worker checks it against. */
async function startChecked<W extends (input: I) => Promise<unknown>, I>(
  client: Client,
  workflowType: string,
  schema: z.ZodType<I>,
  input: I,
  opts: StartOptions,
): Promise<string> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new InvalidInputError(describeIssues(`${workflowType} input`, parsed.error));
  const handle = await client.workflow.start<W>(workflowType, {
    workflowId: opts.workflowId,
    taskQueue: opts.taskQueue ?? taskQueueFromEnv(),
    args: [parsed.data] as Parameters<W>,
  });
  return handle.workflowId;
}

/** Starts pivotMiningWorkflow; returns the workflow id to pass to getProgress/awaitDataset. */
export function startPivotMining(client: Client, input: PivotMiningInput, opts: StartOptions): Promise<string> {
  return startChecked<typeof pivotMiningWorkflow, PivotMiningInput>(
    client,
    'pivotMiningWorkflow',
    pivotMiningInputSchema,
    input,
    opts,
  );
}

/** Waits for the run and returns where its dataset is; a failed run rejects with the workflow failure. */
export async function awaitDataset(client: Client, workflowId: string): Promise<PivotMiningResult> {
  return client.workflow.getHandle<typeof pivotMiningWorkflow>(workflowId).result();
}

/**
 * Waits for the run as awaitDataset does, handing getProgress to `onProgress` every `intervalMs`
 * meanwhile; a poll that fails (the run between tasks, or just finished) is skipped.
 */
export async function followPivotMining(
  client: Client,
  workflowId: string,
  onProgress: (progress: MiningProgress) => void,
  opts: { intervalMs?: number } = {},
): Promise<PivotMiningResult> {
  const result = awaitDataset(client, workflowId);
  let running = true;
  const settled = result.then(
    () => (running = false),
    () => (running = false),
  );
  while (running) {
    const progress = await getProgress(client, workflowId).catch(() => undefined);
    if (progress && running) onProgress(progress);
    await Promise.race([settled, sleep(opts.intervalMs ?? 1000)]);
  }
  return result;
}

/**
 * Cancels a run (or a curriculum) and waits for it to end: `cancelled`, or `finished` when it
 * completed before the cancellation took effect. A cancelled run keeps its shards, so starting it
 * again with the same run id resumes. Any other failure of the workflow rejects.
 */
export async function cancelWorkflow(client: Client, workflowId: string): Promise<'cancelled' | 'finished'> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.cancel();
  try {
    await handle.result();
    return 'finished';
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) return 'cancelled';
    throw err;
  }
}

/**
 * Starts pivotCurriculumWorkflow, which runs until cancelled: each submitPolicyCheckpoint re-profiles
 * its pool with that checkpoint and publishes the curriculum's next version, under
 * `<pool>/curricula/<workflow id>/versions/`. Returns the workflow id; awaitCurriculumStart waits
 * until it has its starting pool.
 */
export function startPivotCurriculum(client: Client, input: PivotCurriculumInput, opts: StartOptions): Promise<string> {
  return startChecked<typeof pivotCurriculumWorkflow, PivotCurriculumInput>(
    client,
    'pivotCurriculumWorkflow',
    pivotCurriculumInputSchema,
    input,
    opts,
  );
}

/**
 * Waits until a started curriculum has fixed its starting pool and returns that pool file. A
 * curriculum that cannot start (its pool has no version yet, a bad initial_pool) rejects with the
 * reason, so the caller learns it now rather than from its first checkpoint.
 */
export async function awaitCurriculumStart(
  client: Client,
  curriculumWorkflowId: string,
  { intervalMs = 200 }: { intervalMs?: number } = {},
): Promise<string> {
  const handle = client.workflow.getHandle<typeof pivotCurriculumWorkflow>(curriculumWorkflowId);
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') {
      await handle.result();
      throw new Error(`curriculum ${curriculumWorkflowId} ended (${status.name}) before its pool was fixed`);
    }
    // A query before the workflow's first task has run is not answered yet; ask again.
    const pool = await handle.query(curriculumPoolQuery).catch(() => null);
    if (pool !== null) return pool;
    await sleep(intervalMs);
  }
}

/**
 * Hands a new policy checkpoint to a running pivotCurriculumWorkflow (a Temporal Update) and waits
 * for the round it triggers: the pool re-profiled with that policy and published as the
 * curriculum's next version.
 */
export async function submitPolicyCheckpoint(
  client: Client,
  curriculumWorkflowId: string,
  checkpoint: PolicyCheckpoint,
): Promise<CurriculumRound> {
  const parsed = policyCheckpointSchema.safeParse(checkpoint);
  if (!parsed.success) throw new InvalidInputError(describeIssues('policyCheckpoint', parsed.error));
  return client.workflow.getHandle(curriculumWorkflowId).executeUpdate(policyCheckpointUpdate, { args: [parsed.data] });
}

export async function getCurriculumRounds(client: Client, curriculumWorkflowId: string): Promise<CurriculumRound[]> {
  return client.workflow.getHandle(curriculumWorkflowId).query(roundsQuery);
}
