import type { Client, WorkflowHandle } from '@temporalio/client';
import { describeIssues } from '../activities/config';
import { pivotMiningInputSchema, policyCheckpointSchema, type PivotMiningInput } from '../workflows/input';
import type { CurriculumRound, PolicyCheckpoint } from '../workflows/poolTypes';
import type { PivotMiningProgress, PivotMiningResult, StageProgress } from '../workflows/types';

// The typed API a training platform uses: start a mining run, watch it, wait for its dataset, and
// feed policy checkpoints to a running pivot curriculum. Inputs are validated here with the same
// zod schemas the worker uses, so a bad request fails before anything starts.

export * from './schedules';
export type { CurriculumRound, PivotMiningInput, PivotMiningProgress, PivotMiningResult, PolicyCheckpoint, StageProgress };

export const DEFAULT_TASK_QUEUE = 'pivot-mining';

export class PivotMinerInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PivotMinerInputError';
  }
}

export interface StartOptions {
  workflowId: string;
  taskQueue?: string;
}

/** Starts pivotMiningWorkflow; returns the workflow id to pass to getProgress/awaitDataset. */
export async function startPivotMining(client: Client, input: PivotMiningInput, opts: StartOptions): Promise<string> {
  const parsed = pivotMiningInputSchema.safeParse(input);
  if (!parsed.success) throw new PivotMinerInputError(describeIssues('pivotMiningWorkflow input', parsed.error));
  const handle = await client.workflow.start('pivotMiningWorkflow', {
    workflowId: opts.workflowId,
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    args: [parsed.data],
  });
  return handle.workflowId;
}

export interface MiningProgress extends PivotMiningProgress {
  status: string;
  /** Live numbers of the chunked stage running now, when there is one. */
  childStage: StageProgress | null;
}

export async function getProgress(client: Client, workflowId: string): Promise<MiningProgress> {
  const handle = client.workflow.getHandle(workflowId);
  const { status } = await handle.describe();
  const progress = await handle.query<PivotMiningProgress>('progress');
  let childStage: StageProgress | null = null;
  if (status.name === 'RUNNING' && progress.childWorkflowId) {
    childStage = await client.workflow
      .getHandle(progress.childWorkflowId)
      .query<StageProgress>('progress')
      .catch(() => null);
  }
  return { ...progress, status: status.name, childStage };
}

/** Waits for the run and returns where its dataset is; a failed run rejects with the workflow failure. */
export async function awaitDataset(client: Client, workflowId: string): Promise<PivotMiningResult> {
  const handle: WorkflowHandle = client.workflow.getHandle(workflowId);
  return (await handle.result()) as PivotMiningResult;
}

/**
 * Hands a new policy checkpoint to a running pivotCurriculumWorkflow (a Temporal Update) and waits
 * for the round it triggers: the pool re-profiled with that policy and published as a new version.
 */
export async function signalPolicyCheckpoint(client: Client, curriculumWorkflowId: string, checkpoint: PolicyCheckpoint): Promise<CurriculumRound> {
  const parsed = policyCheckpointSchema.safeParse(checkpoint);
  if (!parsed.success) throw new PivotMinerInputError(describeIssues('policyCheckpoint', parsed.error));
  return client.workflow.getHandle(curriculumWorkflowId).executeUpdate<CurriculumRound, [PolicyCheckpoint]>('policyCheckpoint', { args: [parsed.data] });
}

export async function getCurriculumRounds(client: Client, curriculumWorkflowId: string): Promise<CurriculumRound[]> {
  return client.workflow.getHandle(curriculumWorkflowId).query<CurriculumRound[]>('rounds');
}
