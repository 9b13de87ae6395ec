import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { validatePivotDataset } from '../../gym/validator';
import type { PivotMiningResult } from '../../contracts/payloads';
import type { CurriculumRound } from '../../contracts/poolPayloads';
import { startApiKeyFrontDoor, type ApiKeyFrontDoor } from '../helpers/apiKeyFrontDoor';
import { readJsonlSync } from '../helpers/jsonl';
import { startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';
import { makeTestCa } from '../helpers/testCa';

// docs/python.md's scripts, run as they are with Temporal's Python SDK against the dev server and a
// worker: a mining run, then curriculum rounds on the pool it published. They reach the server as a
// Temporal Cloud user would, through a front door that requires an API key over TLS (with a test
// CA), configured only by the variables the workers read; a wrong key is refused.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'python-start-test';
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
/** The worker's base directory: the configs it reads and, under artifacts/, what it writes. */
let baseDir: string;
let door: ApiKeyFrontDoor | undefined;
/** Holds the test CA's files; TEMPORAL_CONFIG_FILE points at an empty profile here. */
let tlsDir: string;
const API_KEY = 'pivot-miner-python-api-key';
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
  tlsDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-py-tls-'));
  makeTestCa(tlsDir, [{ name: 'server', cn: 'temporal.test', usage: 'serverAuth' }]);
  writeFileSync(path.join(tlsDir, 'empty.toml'), '[profile.default]\n');
  door = await startApiKeyFrontDoor({
    upstream: env.address,
    apiKey: API_KEY,
    key: readFileSync(path.join(tlsDir, 'server.key')),
    cert: readFileSync(path.join(tlsDir, 'server.pem')),
  });
});

after(async () => {
  await door?.close();
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
  rmSync(tlsDir, { recursive: true, force: true });
});

/** The environment of a Temporal Cloud user: address, namespace, API key, CA; nothing else of TEMPORAL_*. */
function cloudLikeEnv(apiKey: string): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')));
  return {
    ...inherited,
    TEMPORAL_CONFIG_FILE: path.join(tlsDir, 'empty.toml'),
    TEMPORAL_ADDRESS: door!.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    TEMPORAL_API_KEY: apiKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(tlsDir, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    PIVOT_MINER_TASK_QUEUE: TASK_QUEUE,
  };
}

/** Runs an example script against the test's server and worker; resolves to its last stdout line, parsed. */
async function runExample(script: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(python!, [path.join(repoRoot, 'examples/python', script), ...args], {
    cwd: repoRoot,
    timeout: 600_000,
    env: cloudLikeEnv(API_KEY),
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

let mined: PivotMiningResult | undefined;

test(
  'the Python snippet starts pivotMiningWorkflow by type name through an API-key server and gets the dataset',
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
    assert.ok(door!.counts.forwarded > 0, 'the script did not go through the front door');
    mined = result;
  },
);

test('the Python snippet with a wrong API key is refused and starts nothing', { timeout: 120_000 }, async (t) => {
  if (python === null) {
    t.skip('the temporalio Python package could not be installed (see the test above)');
    return;
  }
  const refused = await run(
    python,
    [path.join(repoRoot, 'examples/python/start_pivot_mining.py'), 'configs/demo.yaml', 'wrong-key'],
    { cwd: repoRoot, timeout: 120_000, env: cloudLikeEnv('not-the-key') },
  ).then(
    () => assert.fail('the script ran with a wrong API key'),
    (err: { stderr: string }) => err.stderr,
  );
  assert.match(refused, /missing or wrong API key/);
  await assert.rejects(env.client.workflow.getHandle('wrong-key').describe(), /not found/i);
});

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
