import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { listFiles, isEarlyProfiling } from '../../scripts/chaos/compare';
import { getProgress } from '../../client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { earlyLine } from '../../scripts/commands/status';
import {
  ENGINE_TIMELINE_DIR,
  ENGINE_TIMELINE_SVG,
  isEngineTimeline,
  readTimeline,
} from '../../activities/run/engineTimeline';
import { runPivotMining, startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// Overlap: local profiling starts on the rollouts collect has finished. The same seed must publish
// the same bytes as the sequential pipeline whatever the completion order, so the overlapped runs get
// slow answers at random (a different draw each) to shuffle which chunks and samples finish first.
// Collect's chunks of 3 rows over tasks of 4 make segments that start and end inside a task.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-overlap-test';
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let baseDir: string;

type SourcePreference = 'prefer_mixed' | 'require_mixed';

function writeConfig(
  name: string,
  overlap: boolean,
  faultSeed?: number,
  preference?: SourcePreference,
  interleaveRepeats?: boolean,
): string {
  const slow = { rate: 0.3, kinds: ['slow'], slow_ms: 60 };
  const config = {
    name: 'overlap',
    seed: 7,
    overlap,
    servers: {
      mode: 'embedded',
      ...(faultSeed === undefined ? {} : { faults: { seed: faultSeed, agent: slow, model: slow } }),
    },
    collect: {
      input_jsonl: 'tasks.jsonl',
      agent_name: 'demo_tool_agent',
      num_repeats: 4,
      seed_per_repeat: true,
      chunk_size: 3,
      max_chunks_in_flight: 4,
      ...(interleaveRepeats ? { interleave_repeats: true } : {}),
    },
    ...(preference ? { convert: { source_preference: preference } } : {}),
    local_profile: { num_samples: 8, chunk_size: 16, max_chunks_in_flight: 4 },
    publish: { dataset_name: 'overlap_pivots' },
  };
  writeFileSync(path.join(baseDir, `${name}.yaml`), YAML.stringify(config));
  return `${name}.yaml`;
}

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-overlap-'));
  writeFileSync(path.join(baseDir, 'tasks.jsonl'), readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl')));
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

/** Files whose bytes depend on the config itself (overlap and faults), not on what was mined. */
const CONFIG_RECORDS = new Set(['pipeline_config.yaml', 'run_manifest.json', 'published_digests.json']);

/** A file's bytes, but for where its run lives and the run's own id (which differ by design). */
function runFile(dir: string, rel: string): string {
  const text = readFileSync(path.join(dir, rel), 'utf8').split(dir).join('<run_dir>');
  return rel === 'run_summary.json' ? text.replace(/"run_id": "[^"]*"/, '"run_id": "<run_id>"') : text;
}

/** Every file of the sequential run, byte for byte, but config records, failure sidecars and shards. */
function differingFiles(sequentialDir: string, overlappedDir: string): string[] {
  const compared = (dir: string) =>
    listFiles(dir).filter(
      (rel) =>
        !CONFIG_RECORDS.has(rel) &&
        !rel.includes('_shards/') &&
        !rel.endsWith('_failures.jsonl') &&
        !isEarlyProfiling(rel) &&
        !isEngineTimeline(rel),
    );
  const theirs = new Set(compared(overlappedDir));
  const differing: string[] = [];
  for (const rel of compared(sequentialDir)) {
    if (!theirs.delete(rel)) differing.push(`${rel} (missing)`);
    else if (runFile(sequentialDir, rel) !== runFile(overlappedDir, rel)) differing.push(rel);
  }
  return [...differing, ...[...theirs].map((rel) => `${rel} (extra)`)];
}

/**
 * Slices of the run's engine timeline in which both stages had requests in flight, after checking
 * that the report links the drawing and the drawing shows both.
 */
async function bothStagesInFlight(runDir: string): Promise<number> {
  const report = readFileSync(path.join(runDir, 'dataset', 'report.html'), 'utf8');
  assert.match(report, new RegExp(`<img id="engine-timeline" src="\\.\\./${ENGINE_TIMELINE_SVG}"`));
  const svg = readFileSync(path.join(runDir, ENGINE_TIMELINE_SVG), 'utf8');
  const timeline = await readTimeline(path.join(runDir, ENGINE_TIMELINE_DIR));
  const labels = timeline.series.map((s) => s.label);
  assert.deepEqual(labels, ['collect → agent (its model calls inside)', 'local_profile → policy model']);
  for (const label of labels) assert.ok(svg.includes(label), `${ENGINE_TIMELINE_SVG} lacks ${label}`);
  const [collect, profile] = timeline.series.map((s) => s.inFlight);
  return collect!.filter((n, i) => n > 0 && profile![i]! > 0).length;
}

/** When a workflow's first child started, and when it closed, from its history. */
async function childSpan(workflowId: string, which: 'first-start' | 'close'): Promise<number> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const event =
    which === 'first-start' ? events.find((e) => e.childWorkflowExecutionStartedEventAttributes) : events.at(-1);
  assert.ok(event?.eventTime, `${workflowId}: no ${which} event`);
  return Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6);
}

test(
  'overlapped runs with shuffled completion orders publish the sequential run’s bytes',
  { timeout: 900_000 },
  async () => {
    const run = (configPath: string, runId: string) =>
      runPivotMining(env.client, { taskQueue: TASK_QUEUE, configPath, runId });
    /** The run, and the status lines seen while collect and early profiling both advanced. */
    const watched = async (configPath: string, runId: string): Promise<[PivotMiningResult, string[]]> => {
      const result = run(configPath, runId);
      const both: string[] = [];
      let ended = false;
      void result.finally(() => (ended = true)).catch(() => undefined);
      while (!ended) {
        const progress = await getProgress(env.client, runId).catch(() => null);
        const collect = progress?.childStage;
        if (progress?.early && collect?.stage.startsWith('collect') && progress.early.runningDone > 0)
          both.push(`${collect.stage} ${collect.done}/${collect.total}; ${earlyLine(progress.early)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return [await result, both];
    };
    const sequential = await run(writeConfig('sequential', false), 'sequential');
    assert.equal(sequential.prefetch, undefined);
    // One stage after the other: at most the slice where one ends and the next begins holds both.
    assert.ok((await bothStagesInFlight(sequential.runDir)) <= 1);

    for (const faultSeed of [1, 2]) {
      const runId = `overlapped-${faultSeed}`;
      const [overlapped, both] = await watched(writeConfig(runId, true, faultSeed), runId);
      assert.deepEqual(differingFiles(sequential.runDir, overlapped.runDir), [], runId);
      // Early profiling's files are gone once the run has what it needs from them.
      assert.deepEqual(listFiles(overlapped.runDir).filter(isEarlyProfiling), [], runId);
      assert.deepEqual(overlapped.counts, sequential.counts, runId);

      // It did overlap: early profiling answered most of the run's samples, and its first segment
      // started before collect had finished.
      const early = overlapped.prefetch;
      assert.ok(early, runId);
      assert.ok(early.segments >= 2, `${runId}: ${JSON.stringify(early)}`);
      assert.ok(early.reused >= 0.8 * sequential.counts.local_profile_rollouts!, `${runId}: ${JSON.stringify(early)}`);
      // `pivot-miner status` showed both stages advancing at once.
      assert.ok(both.length > 0, `${runId}: status never showed collect and early profiling at once`);
      // And the report's engine timeline shows both at once, well past the one slice a stage boundary holds.
      const shared = await bothStagesInFlight(overlapped.runDir);
      assert.ok(shared >= 5, `${runId}: both stages in flight in only ${shared} of the timeline's slices`);
      await assertSegmentBeforeCollectClosed(runId);
      // The run's chunks that early samples answered whole ran several to an activity.
      const batches = await activityCount(`${runId}/local_profile`, 'runReusedChunks');
      assert.ok(batches > 0, `${runId}: no runReusedChunks activity`);
      // Early profiling filed its samples itself, not the run after it.
      assert.equal(await activityCount(runId, 'alignPrefetched'), 0, runId);
      assert.equal(await activityCount(`${runId}/prefetch`, 'alignPrefetched'), 1, runId);
      // Without require_mixed a segment takes every finished row: it ends where collect's finished
      // chunks (of 3 rows) end, inside a task or not, or at the last row (80).
      const bounds = await segmentBounds(runId);
      assert.ok(
        bounds.every((row) => row % 3 === 0 || row === 80),
        `${runId}: segment bounds ${bounds.join(' ')}`,
      );
    }
  },
);

test(
  'with require_mixed, segments end at whole tasks and publish the sequential run’s bytes',
  { timeout: 600_000 },
  async () => {
    const run = (configPath: string, runId: string) =>
      runPivotMining(env.client, { taskQueue: TASK_QUEUE, configPath, runId });
    const sequential = await run(
      writeConfig('mixed-sequential', false, undefined, 'require_mixed'),
      'mixed-sequential',
    );
    const overlapped = await run(writeConfig('mixed-overlapped', true, 3, 'require_mixed'), 'mixed-overlapped');
    assert.deepEqual(differingFiles(sequential.runDir, overlapped.runDir), []);
    assert.deepEqual(overlapped.counts, sequential.counts);
    const early = overlapped.prefetch;
    assert.ok(early && early.segments >= 2, JSON.stringify(early));
    assert.ok(early.reused >= 0.8 * sequential.counts.local_profile_rollouts!, JSON.stringify(early));
    await assertSegmentBeforeCollectClosed('mixed-overlapped');
    // Tasks of 4 rows: a group is whole only from a multiple of 4 to one, whatever chunks finished.
    const bounds = await segmentBounds('mixed-overlapped');
    assert.ok(bounds.length >= 2 && bounds.every((row) => row % 4 === 0), `segment bounds ${bounds.join(' ')}`);
  },
);

test(
  'with interleave_repeats, collect runs round by round and overlap publishes the sequential run’s bytes',
  { timeout: 600_000 },
  async () => {
    const run = (runId: string, overlap: boolean, faultSeed?: number) =>
      runPivotMining(env.client, {
        taskQueue: TASK_QUEUE,
        configPath: writeConfig(runId, overlap, faultSeed, 'require_mixed', true),
        runId,
      });
    const sequential = await run('interleaved-sequential', false);
    const materialized = readFileSync(path.join(sequential.runDir, 'rollouts_materialized_inputs.jsonl'), 'utf8');
    const rounds = materialized
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { _ng_rollout_index: number })._ng_rollout_index);
    // 20 tasks × 4 repeats, round by round: every task's first repeat, then every second one, ...
    assert.deepEqual(
      rounds,
      [0, 1, 2, 3].flatMap((round) => Array<number>(20).fill(round)),
    );
    // A task's rows are never side by side, so segments cannot end at whole tasks; nothing early is trusted.
    const overlapped = await run('interleaved-overlapped', true, 4);
    assert.deepEqual(differingFiles(sequential.runDir, overlapped.runDir), []);
    assert.deepEqual(overlapped.counts, sequential.counts);
  },
);

/** How many activities of this type a workflow scheduled. */
async function activityCount(workflowId: string, activityType: string): Promise<number> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  ).length;
}

/** The first and last rows of every segment early profiling started, from its workflow ids. */
async function segmentBounds(runId: string): Promise<number[]> {
  const history = await env.client.workflow.getHandle(`${runId}/prefetch`).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const id = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId ?? '';
    const bounds = /rows-(\d+)-(\d+)$/.exec(id);
    return bounds ? [Number(bounds[1]), Number(bounds[2])] : [];
  });
}

async function assertSegmentBeforeCollectClosed(runId: string): Promise<void> {
  const firstSegment = await childSpan(`${runId}/prefetch`, 'first-start');
  const collectClosed = await childSpan(`${runId}/collect`, 'close');
  assert.ok(
    firstSegment < collectClosed,
    `${runId}: first segment at ${firstSegment}, collect closed ${collectClosed}`,
  );
}
