import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { PivotMiningResult } from '../../contracts/payloads';
import { readJsonlSync } from '../helpers/jsonl';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// The client as a training platform gets it: `npm pack` of this checkout installed into an empty
// TypeScript project, a file importing it compiled by tsc against the package's own declarations,
// then run against a dev server and a worker on a task queue that is not the default. The program
// names neither the server nor the queue: both come from the environment, as the workers read it.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
const TASK_QUEUE = 'packed-client-queue';
const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-client-'));
const app = path.join(root, 'app');
const artifactsRoot = path.join(root, 'artifacts');
let stack: WorkerTestEnv | undefined;

/** Starts one run and follows it to its dataset, cancels a second, and prints what it saw. */
const START = `import {
  cancelWorkflow,
  connectClient,
  followPivotMining,
  startPivotMining,
  type MiningProgress,
  type PivotMiningResult,
} from 'pivot-miner';

async function main(): Promise<void> {
  const [configPath, workflowId] = process.argv.slice(2) as [string, string];
  const { client, close } = await connectClient();
  try {
    await startPivotMining(client, { config_path: configPath, run_id: workflowId }, { workflowId });
    const stages: string[] = [];
    const onProgress = (progress: MiningProgress) => stages.push(progress.stage);
    const result: PivotMiningResult = await followPivotMining(client, workflowId, onProgress, { intervalMs: 200 });
    const cancelledId = \`\${workflowId}-cancelled\`;
    await startPivotMining(client, { config_path: configPath, run_id: cancelledId }, { workflowId: cancelledId });
    const cancelled = await cancelWorkflow(client, cancelledId);
    console.log(JSON.stringify({ result, stages, cancelled }));
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
`;

/** Misuses the client twice; tsc must refuse both, which it can only do with the package's types. */
const BAD = `import { awaitDataset, connectClient, startPivotMining } from 'pivot-miner';

export async function misuse(): Promise<number> {
  const { client } = await connectClient();
  await startPivotMining(client, { config_path: 42, run_id: 'x' }, { workflowId: 'x' });
  return (await awaitDataset(client, 'x')).pivotsPath;
}
`;

function writeJson(file: string, value: unknown): void {
  writeFileSync(path.join(app, file), `${JSON.stringify(value, null, 2)}\n`);
}

/** An empty TypeScript project with the packed tarball and @types/node installed from npm's cache. */
async function makeApp(): Promise<void> {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', root], {
    cwd: repoRoot,
    maxBuffer: 1 << 24,
  });
  const tarball = path.join(root, stdout.trim().split('\n').at(-1)!);
  mkdirSync(app);
  writeJson('package.json', { name: 'training-platform', version: '1.0.0', private: true, type: 'commonjs' });
  const nodeTypes = JSON.parse(readFileSync(path.join(repoRoot, 'node_modules/@types/node/package.json'), 'utf8')) as {
    version: string;
  };
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@types/node@${nodeTypes.version}`],
    { cwd: app, maxBuffer: 1 << 24 },
  );
  const compilerOptions = {
    strict: true,
    target: 'ES2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    // As most projects set it (@temporalio/common's own declarations need @types/ms otherwise);
    // bad.ts shows the package's types still reach the program rather than turning into any.
    skipLibCheck: true,
    outDir: 'build',
  };
  writeJson('tsconfig.json', { compilerOptions, files: ['start.ts'] });
  writeJson('tsconfig.bad.json', { extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['bad.ts'] });
  writeFileSync(path.join(app, 'start.ts'), START);
  writeFileSync(path.join(app, 'bad.ts'), BAD);
}

before(async () => {
  await makeApp();
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: artifactsRoot });
});

after(async () => {
  await stack?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('a file importing the packed client compiles with its types; misuse of them does not', async () => {
  const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
    (err: { stdout: string }) => assert.fail(`tsc refused start.ts:\n${err.stdout}`),
  );
  assert.equal(compiled.stdout, '');
  const refused = await run(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], { cwd: app }).then(
    () => assert.fail('tsc accepted bad.ts'),
    (err: { stdout: string }) => err.stdout,
  );
  assert.match(refused, /bad\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  assert.match(refused, /bad\.ts\(6,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
});

test(
  'the compiled program runs a demo run through the client on the queue and profile the environment names',
  { timeout: 300_000 },
  async () => {
    // build/start.js is what the test above compiled.
    const env = stack!.env;
    // The address and namespace come from a profile of a Temporal config file, the queue from
    // PIVOT_MINER_TASK_QUEUE: the settings a worker takes, and nothing passed in code.
    const configFile = path.join(root, 'temporal.toml');
    writeFileSync(
      configFile,
      `[profile.packed]\naddress = "${env.address}"\nnamespace = "${env.namespace ?? 'default'}"\n`,
    );
    const { TEMPORAL_ADDRESS: _address, TEMPORAL_NAMESPACE: _namespace, ...inherited } = process.env;
    const workflowId = 'packed-client-run';
    const { stdout } = await run(
      process.execPath,
      ['build/start.js', path.join(repoRoot, 'configs/demo.yaml'), workflowId],
      {
        cwd: app,
        timeout: 240_000,
        env: {
          ...inherited,
          TEMPORAL_CONFIG_FILE: configFile,
          TEMPORAL_PROFILE: 'packed',
          PIVOT_MINER_TASK_QUEUE: TASK_QUEUE,
        },
      },
    );
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      result: PivotMiningResult;
      stages: string[];
      cancelled: string;
    };
    assert.equal(seen.result.runDir, path.join(artifactsRoot, 'runs', workflowId));
    const rows = readJsonlSync(seen.result.pivotsPath);
    assert.ok(rows.length > 0);
    assert.equal(rows.length, seen.result.counts.published);
    assert.ok(seen.stages.length > 0, 'followPivotMining reported no progress');
    assert.equal(seen.cancelled, 'cancelled');
    const described = await env.client.workflow.getHandle(workflowId).describe();
    assert.equal(described.taskQueue, TASK_QUEUE);
  },
);
