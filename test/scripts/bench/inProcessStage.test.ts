import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { closePools } from '../../../activities/http/client';
import { aggregateMetricsPath } from '../../../gym/aggregateMetrics';
import { rewardProfileOutputPaths } from '../../../gym/rewardProfile';
import { runBareCollect } from '../../../scripts/bench/bare';
import { benchPlan } from '../../../scripts/bench/collect';
import { runStageInProcess } from '../../../scripts/bench/inProcessStage';
import { DEMO_TASKS, writeDistinctRows } from '../../../scripts/bench/inputs';
import { EMBEDDED_AGENT_NAME, startEmbeddedStack, type EmbeddedStack } from '../../../servers/embeddedStack';

// The bench's third side against the real embedded servers: the stage's activities without Temporal
// must collect what the bare loop collects, through several chunks and merges. And the yardstick must
// do the stage's work and no less: the bare loop leaves the files the stage leaves, byte for byte
// (its rollouts in the order they completed, the stage's in key order).

let stack: EmbeddedStack;
let dir: string;

before(async () => {
  stack = await startEmbeddedStack({ seed: 7, latencyMs: 0 });
  dir = mkdtempSync(path.join(os.tmpdir(), 'in-process-stage-'));
});

after(async () => {
  await closePools();
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

const read = (file: string) => readFileSync(file, 'utf8');
const linesOf = (file: string) =>
  read(file)
    .split('\n')
    .filter((line) => line !== '');

/** Every file a collect stage leaves beside its rollouts, by what it is. */
function stageFiles(rolloutsPath: string): Record<string, string> {
  const { rewardProfilingPath, agentMetricsPath } = rewardProfileOutputPaths(rolloutsPath);
  return {
    materializedInputs: rolloutsPath.replace(/\.jsonl$/, '_materialized_inputs.jsonl'),
    aggregateMetrics: aggregateMetricsPath(rolloutsPath),
    rewardProfiling: rewardProfilingPath,
    agentMetrics: agentMetricsPath,
  };
}

test('leaves the files the bare loop leaves, chunk by chunk, and times its chunk span', async () => {
  const tasks = path.join(dir, 'tasks.jsonl');
  await writeDistinctRows(DEMO_TASKS, tasks, 10);
  const runDir = path.join(dir, 'run');
  // Chunks of 8 from 40 rollouts: five chunks, two at a time, so finished chunks merge during the span.
  const plan = benchPlan({
    runDir,
    baseDir: dir,
    agentUrl: stack.urls.agent,
    modelUrl: stack.urls.model,
    agentName: EMBEDDED_AGENT_NAME,
    numRepeats: 4,
    numSamples: 4,
    chunkSize: 8,
    maxChunksInFlight: 2,
    maxConcurrency: 4,
  });
  const run = await runStageInProcess(plan, tasks, path.join(runDir, 'rollouts'));
  const bareOut = path.join(dir, 'bare.jsonl');
  const bare = await runBareCollect({
    tasksPath: tasks,
    agentUrl: stack.urls.agent,
    agentName: EMBEDDED_AGENT_NAME,
    numRepeats: 4,
    concurrency: 4,
    outPath: bareOut,
  });

  assert.equal(run.completed, 40);
  assert.equal(bare.rows, 40);
  const stageOut = path.join(runDir, 'rollouts.jsonl');
  const [bareLines, stageLines] = [linesOf(bareOut).sort(), linesOf(stageOut).sort()];
  const differing = bareLines.findIndex((line, i) => line !== stageLines[i]);
  assert.ok(
    bareLines.length === stageLines.length && differing === -1,
    `rollout lines differ (sorted, line ${differing}): ${bareLines[differing]?.slice(-300)}`,
  );
  const stage = stageFiles(stageOut);
  for (const [what, file] of Object.entries(stageFiles(bareOut))) assert.equal(read(file), read(stage[what]!), what);
  // Ten tasks, ten group rows: files of equal bytes that said nothing would pass above.
  assert.equal(linesOf(stage.rewardProfiling!).length, 10);
  assert.ok(bare.tailSeconds > 0 && bare.tailSeconds < bare.seconds, JSON.stringify(bare));
  assert.ok(run.chunkSpanSeconds > 0 && run.serialSeconds > 0);
  // A nanosecond of slack for the rounding of three float sums, never for a span measured twice.
  assert.ok(run.chunkSpanSeconds + run.serialSeconds <= run.seconds + 1e-9, JSON.stringify(run));
});
