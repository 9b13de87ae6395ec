import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { validatePivotDataset } from '../../gym/validator';
import type { PivotMiningResult } from '../../contracts/payloads';
import type { CurriculumRound } from '../../contracts/poolPayloads';
import { readJsonlSync } from '../helpers/jsonl';
import { startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// docs/python.md's scripts, run as they are with Temporal's Python SDK against the dev server and a
// worker: a mining run, then a curriculum round on the pool it published.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'python-start-test';
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
/** The worker's base directory: the configs it reads and, under artifacts/, what it writes. */
let baseDir: string;
let python: string | null = null;
let pythonError = '';

before(async () => {
  try {
    python = (
      await run('bash', [path.join(repoRoot, 'scripts/ensure-python-sdk.sh')], { cwd: repoRoot, timeout: 600_000 })
    ).stdout.trim();
  } catch (err) {
    pythonError = String((err as { stderr?: string }).stderr ?? err);
    return;
  }
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-py-'));
  mkdirSync(path.join(baseDir, 'configs'));
  for (const file of ['demo.yaml', 'demo_tasks.jsonl', 'nightly.yaml'])
    copyFileSync(path.join(repoRoot, 'configs', file), path.join(baseDir, 'configs', file));
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

/** Runs an example script against the test's server and worker; resolves to its last stdout line, parsed. */
async function runExample(script: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(python!, [path.join(repoRoot, 'examples/python', script), ...args], {
    cwd: repoRoot,
    timeout: 600_000,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      PIVOT_MINER_TASK_QUEUE: TASK_QUEUE,
    },
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

let mined: PivotMiningResult | undefined;

test(
  'the Python snippet starts pivotMiningWorkflow by type name and gets the dataset',
  { timeout: 600_000 },
  async (t) => {
    if (python === null) {
      t.skip(
        `the temporalio Python package could not be installed (scripts/ensure-python-sdk.sh): ${pythonError.trim().split('\n').pop()}`,
      );
      return;
    }
    const result = (await runExample('start_pivot_mining.py', [
      'configs/demo.yaml',
      'from-python',
    ])) as PivotMiningResult;
    assert.equal(result.runDir, path.join(baseDir, 'artifacts', 'runs', 'from-python'));
    const rows = readJsonlSync(result.pivotsPath);
    assert.equal(rows.length, result.counts.published);
    assert.ok(rows.length > 0);
    const validation = await validatePivotDataset({
      path: result.pivotsPath,
      agentRef: 'demo_pivots_pivot_agent',
      gymConfigPath: result.gymConfigPath,
      checkToolNames: true,
    });
    assert.equal(validation.exitCode, 0, validation.stderr);
    mined = result;
  },
);

test(
  'the Python curriculum script starts pivotCurriculumWorkflow on that dataset and gets a round per checkpoint',
  { timeout: 600_000 },
  async (t) => {
    if (!mined) {
      t.skip('the mining run above did not give a dataset');
      return;
    }
    const curriculum = (step: number) =>
      runExample('pivot_curriculum.py', [
        'configs/nightly.yaml',
        'python-curriculum',
        `sim-policy@step-${step}`,
        String(step),
        // initial_pool is read inside the worker's base directory.
        path.relative(baseDir, mined!.pivotsPath),
      ]) as Promise<CurriculumRound>;
    const first = await curriculum(1);
    // The second call finds the curriculum running and only sends its checkpoint.
    const second = await curriculum(3);
    assert.deepEqual([first.round, first.trainingStep, second.round, second.trainingStep], [1, 1, 2, 3]);
    assert.equal(first.poolSize, mined.counts.published);
    assert.equal(readJsonlSync(second.pivotsPath).length, second.kept);
    const rounds = await env.client.workflow.getHandle('python-curriculum').query<CurriculumRound[]>('rounds');
    assert.deepEqual(
      rounds.map((round) => round.versionId),
      [first.versionId, second.versionId],
    );
    await env.client.workflow.getHandle('python-curriculum').cancel();
  },
);
