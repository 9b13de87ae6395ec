import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { pipelineConfigSchema } from '../../contracts/config';
import type { CollectStageInput } from '../../contracts/payloads';
import { startWorkerTestEnv, type WorkerTestEnv } from './temporal';

// A collect stage run on its own (collectRolloutsWorkflow) on a real dev server and an in-process
// worker, for tests where an operator acts on a stage in flight and the stage's files are compared
// with an undisturbed run's.

const repoRoot = path.resolve(__dirname, '../..');
const STAGE_FILES = ['rollouts.jsonl', 'rollouts_failures.jsonl', 'rollouts_reward_profiling.jsonl'];

export interface CollectStageTest {
  readonly stack: WorkerTestEnv;
  /** The stage's input for a run directory of its own, with `settings` as the config's servers and collect blocks. */
  input(runName: string): CollectStageInput;
  start(workflowId: string, input: CollectStageInput): ReturnType<WorkerTestEnv['env']['client']['workflow']['start']>;
}

/** Registers before/after hooks that start and stop the server and worker for this test file. */
export function collectStageTest(name: string, settings: { servers: unknown; collect: unknown }): CollectStageTest {
  const taskQueue = `pivot-miner-${name}`;
  let stack: WorkerTestEnv | undefined;
  let workDir = '';
  before(async () => {
    workDir = mkdtempSync(path.join(os.tmpdir(), `pivot-miner-${name}-`));
    stack = await startWorkerTestEnv(taskQueue);
  });
  after(async () => {
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });
  return {
    get stack() {
      assert.ok(stack, 'the worker is started by the before hook');
      return stack;
    },
    input(runName) {
      const runDir = path.join(workDir, runName);
      mkdirSync(runDir, { recursive: true });
      const config = pipelineConfigSchema.parse({ name: name.replaceAll('-', '_'), seed: 7, ...settings });
      return {
        plan: { runId: runName, runDir, baseDir: repoRoot, config },
        stage: 'collect',
        inputPath: config.collect.input_jsonl,
        outPrefix: path.join(runDir, 'rollouts'),
      };
    },
    start(workflowId, input) {
      return this.stack.env.client.workflow.start('collectRolloutsWorkflow', { taskQueue, workflowId, args: [input] });
    },
  };
}

/** Asserts that a stage wrote the files of the reference run, byte for byte. */
export function assertSameStageFiles(subject: CollectStageInput, reference: CollectStageInput): void {
  for (const file of STAGE_FILES)
    assert.equal(
      readFileSync(path.join(subject.plan.runDir, file), 'utf8'),
      readFileSync(path.join(reference.plan.runDir, file), 'utf8'),
      file,
    );
}
