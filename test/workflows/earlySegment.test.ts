import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import { pipelineConfigSchema } from '../../contracts/config';
import { chunksFinishedSignal } from '../../contracts/temporal';
import type { CollectStageInput, CollectStageResult, PrefetchResult, RunPlan } from '../../contracts/payloads';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// An early-profiling segment on the real worker: early profiling cuts collect's rows into a segment
// and profiles its candidates on the policy engine. The run reads only the segment's merged samples
// and their count, so the segment runs no finish (reward profile, aggregate metrics, health checks,
// accounting), and its samples are the bytes the run's own local profile would sample for them.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'early-segment-test';
let stack: WorkerTestEnv | undefined;
let workDir: string;

before(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-early-segment-'));
  stack = await startWorkerTestEnv(TASK_QUEUE);
});

after(async () => {
  await stack?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

function plan(runName: string): RunPlan {
  const runDir = path.join(workDir, runName);
  mkdirSync(runDir, { recursive: true });
  const config = pipelineConfigSchema.parse({
    name: 'early_segment_test',
    seed: 7,
    servers: { mode: 'embedded' },
    collect: {
      input_jsonl: 'configs/demo_tasks.jsonl',
      agent_name: 'demo_tool_agent',
      num_repeats: 2,
      chunk_size: 8,
      max_chunks_in_flight: 4,
    },
    local_profile: { num_samples: 4, chunk_size: 8, max_chunks_in_flight: 4 },
  });
  return { runId: runName, runDir, baseDir: repoRoot, config };
}

async function runStage(workflowId: string, input: CollectStageInput): Promise<CollectStageResult> {
  return (await stack!.env.client.workflow.execute('collectRolloutsWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [input],
  })) as CollectStageResult;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(workflowId: string): Promise<HistoryEvent[]> {
  return (await stack!.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

const activityTypes = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

const eventMs = (e: HistoryEvent | undefined): number =>
  Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);

/** From the last chunk's completion to the workflow's close: what the segment costs after its engine work. */
function tailMs(events: HistoryEvent[]): number {
  const chunkScheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runChunk')
      .map((e) => String(e.eventId)),
  );
  const lastChunk = [...events]
    .reverse()
    .find(
      (e) =>
        e.activityTaskCompletedEventAttributes &&
        chunkScheduled.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)),
    );
  return eventMs(events.at(-1)) - eventMs(lastChunk);
}

const withoutDir = (text: string, dir: string) => text.split(dir).join('<run_dir>');

test('an early segment publishes its merged samples and runs no finish', { timeout: 600_000 }, async (t) => {
  const collectPlan = plan('run');
  const collectPrefix = path.join(collectPlan.runDir, 'rollouts');
  const collected = await runStage('early-segment-collect', {
    plan: collectPlan,
    stage: 'collect',
    inputPath: 'configs/demo_tasks.jsonl',
    outPrefix: collectPrefix,
  });

  const prefetchId = 'early-segment-run/prefetch';
  // The worker runs in this process: its CPU time while early profiling runs is mostly the segment's.
  const cpuBefore = process.cpuUsage();
  const early = await stack!.env.client.workflow.start('prefetchLocalProfileWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: prefetchId,
    args: [{ plan: collectPlan, collectPrefix }],
  });
  await early.signal(chunksFinishedSignal, { chunks: collected.materialize.chunks, final: true });
  const result = (await early.result()) as PrefetchResult;
  const cpu = process.cpuUsage(cpuBefore);
  assert.equal(result.segments, 1, JSON.stringify(result));
  const segmentDir = result.segmentDirs[0]!;
  const segment = await historyOf(`${prefetchId}/${path.basename(segmentDir)}`);
  const files = readdirSync(segmentDir);
  t.diagnostic(
    `segment of ${result.samples} samples: tail after its last chunk ${tailMs(segment)} ms, ` +
      `worker process CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms; its files: ${files.join(' ')}`,
  );

  // No finish, and nothing a finish writes: only the merged samples beside the segment's inputs.
  const types = activityTypes(segment);
  assert.ok(types.includes('runChunk'), types.join(' '));
  for (const tail of ['finishStage', 'stageAccounting']) assert.ok(!types.includes(tail), types.join(' '));
  const finishOutputs = files.filter((f) =>
    /reward_profiling|agent_metrics|aggregate_metrics|repeat_level_metrics|health/.test(f),
  );
  assert.deepEqual(finishOutputs, [], files.join(' '));

  // The samples the run reads: the bytes and count the run's own local profile gives the same candidates.
  const reference = plan('reference');
  // A stage reads only inside its run directory.
  const candidatesPath = path.join(reference.runDir, 'candidates.jsonl');
  copyFileSync(path.join(segmentDir, 'candidates.jsonl'), candidatesPath);
  const profiled = await runStage('early-segment-reference', {
    plan: reference,
    stage: 'local_profile',
    inputPath: candidatesPath,
    outPrefix: path.join(reference.runDir, 'local_profile'),
  });
  assert.ok(profiled.merge.completed > 0);
  assert.equal(result.samples, profiled.merge.completed);
  assert.equal(
    withoutDir(readFileSync(path.join(segmentDir, 'local_profile.jsonl'), 'utf8'), segmentDir),
    withoutDir(readFileSync(profiled.merge.rolloutsPath, 'utf8'), reference.runDir),
  );
});
