import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { closePools } from '../../../activities/http/client';
import { runBareCollect } from '../../../scripts/bench/bare';
import { benchPlan } from '../../../scripts/bench/collect';
import { runStageInProcess } from '../../../scripts/bench/inProcessStage';
import { DEMO_TASKS, writeDistinctRows } from '../../../scripts/bench/inputs';
import { EMBEDDED_AGENT_NAME, startEmbeddedStack, type EmbeddedStack } from '../../../servers/embeddedStack';

// The bench's third side against the real embedded servers: the stage's activities without Temporal
// must collect what the bare loop collects, through several chunks and merges.

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

const keysOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const row = JSON.parse(line) as { _ng_task_index: number; _ng_rollout_index: number; reward?: number };
      return `${row._ng_task_index}:${row._ng_rollout_index}:${row.reward}`;
    })
    .sort();

test('collects every rollout the bare loop collects, chunk by chunk, and times its chunk span', async () => {
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
  await runBareCollect({ tasksPath: tasks, agentUrl: stack.urls.agent, agentName: EMBEDDED_AGENT_NAME, numRepeats: 4, concurrency: 4, outPath: bareOut });

  assert.equal(run.completed, 40);
  assert.deepEqual(keysOf(path.join(runDir, 'rollouts.jsonl')), keysOf(bareOut));
  assert.ok(run.chunkSpanSeconds > 0 && run.serialSeconds > 0);
  // A nanosecond of slack for the rounding of three float sums, never for a span measured twice.
  assert.ok(run.chunkSpanSeconds + run.serialSeconds <= run.seconds + 1e-9, JSON.stringify(run));
});
