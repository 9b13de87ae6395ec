import { collectRolloutsWorkflow } from '../../workflows';
import type { Client } from '@temporalio/client';
import { pipelineConfigSchema } from '../../contracts/config';
import type { CollectStageInput, CollectStageResult, RolloutStage, RunPlan } from '../../contracts/payloads';
import { forEachRun } from './history';
import { runRecord, type RunRecord } from './timeline';

// The durable side of the bench: collectRolloutsWorkflow started directly (no parent pipeline), in
// attach mode against the bench's simulator process, timed from start to result.

export interface BenchPlanOptions {
  runDir: string;
  baseDir: string;
  agentUrl: string;
  modelUrl: string;
  agentName: string;
  numRepeats: number;
  numSamples: number;
  chunkSize: number;
  maxChunksInFlight: number;
  maxConcurrency: number;
}

export function benchPlan(opts: BenchPlanOptions): RunPlan {
  const chunking = {
    chunk_size: opts.chunkSize,
    max_chunks_in_flight: opts.maxChunksInFlight,
    max_concurrency: opts.maxConcurrency,
  };
  const config = pipelineConfigSchema.parse({
    name: 'bench',
    seed: 7,
    servers: { mode: 'attach', agent_url: opts.agentUrl },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: opts.agentName, num_repeats: opts.numRepeats, ...chunking },
    local_profile: {
      num_samples: opts.numSamples,
      model: { url: opts.modelUrl, max_concurrency: opts.maxConcurrency },
      ...chunking,
    },
  });
  return { runId: 'bench', runDir: opts.runDir, baseDir: opts.baseDir, config };
}

export interface DurableStageRun {
  result: CollectStageResult;
  seconds: number;
  historyEventsPerRun: number[];
  /** What each run's history says about timing, first run first. */
  runs: RunRecord[];
}

export async function runDurableStage(
  client: Client,
  opts: {
    taskQueue: string;
    workflowId: string;
    plan: RunPlan;
    stage: RolloutStage;
    inputPath: string;
    outPrefix: string;
    continueAsNewAfterEvents?: number;
  },
): Promise<DurableStageRun> {
  const input: CollectStageInput = {
    plan: opts.plan,
    stage: opts.stage,
    inputPath: opts.inputPath,
    outPrefix: opts.outPrefix,
    continueAsNewAfterEvents: opts.continueAsNewAfterEvents,
  };
  const started = process.hrtime.bigint();
  const handle = await client.workflow.start(collectRolloutsWorkflow, {
    taskQueue: opts.taskQueue,
    workflowId: opts.workflowId,
    args: [input],
  });
  const result = await handle.result();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const runs = await forEachRun(client, opts.workflowId, handle.firstExecutionRunId, runRecord);
  return { result, seconds, runs, historyEventsPerRun: runs.map((r) => r.events) };
}
