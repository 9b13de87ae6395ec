import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { validatePivotDataset } from '../../gym/validator';
import { readJsonlSync } from '../helpers/jsonl';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// docs/python.md's snippet, run as is with Temporal's Python SDK against the dev server and a worker.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'python-start-test';
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let artifactsRoot: string;
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
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-py-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: artifactsRoot });
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

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
    const { stdout } = await run(
      python,
      [path.join(repoRoot, 'examples/python/start_pivot_mining.py'), 'configs/demo.yaml', 'from-python'],
      {
        cwd: repoRoot,
        timeout: 600_000,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: env.namespace ?? 'default',
          PIVOT_MINER_TASK_QUEUE: TASK_QUEUE,
        },
      },
    );
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      runDir: string;
      pivotsPath: string;
      gymConfigPath: string;
      counts: Record<string, number>;
    };
    assert.equal(result.runDir, path.join(artifactsRoot, 'runs', 'from-python'));
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
  },
);
