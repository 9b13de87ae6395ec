import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { PivotMiningResult } from '../../contracts/payloads';
import type { CurriculumRound } from '../../contracts/poolPayloads';
import { readJsonlSync } from '../helpers/jsonl';
import { startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// The client as a training platform gets it: `npm pack` of this checkout installed into an empty
// TypeScript project, docs/client.md's example files compiled there by tsc against the package's
// own declarations, then each run against a dev server and a worker on a task queue that is not the
// default. The programs name neither the server nor the queue: a profile of a Temporal config file
// and PIVOT_MINER_TASK_QUEUE do, as for the workers.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
const TASK_QUEUE = 'packed-client-queue';
const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-client-'));
const app = path.join(root, 'app');
/** The worker's base directory: the configs it reads and, under artifacts/, what it writes. */
const baseDir = path.join(root, 'base');
let stack: WorkerTestEnv | undefined;

/** Misuses the client twice; tsc must refuse both, which it can only do with the package's types. */
const BAD = `import { awaitDataset, connectClient, startPivotMining } from 'pivot-miner';

export async function misuse(): Promise<number> {
  const { client } = await connectClient();
  await startPivotMining(client, { config_path: 42, run_id: 'x' }, { workflowId: 'x' });
  return (await awaitDataset(client, 'x')).pivotsPath;
}
`;

/** docs/client.md's ```ts blocks by the file name on their first line (`// run.ts`). */
function docExamples(): Map<string, string> {
  const doc = readFileSync(path.join(repoRoot, 'docs/client.md'), 'utf8');
  const blocks = [...doc.matchAll(/```ts\n(\/\/ (\w+\.ts)\n[\s\S]*?)```\n/g)];
  return new Map(blocks.map((match) => [match[2]!, match[1]!]));
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(path.join(app, file), `${JSON.stringify(value, null, 2)}\n`);
}

/** An empty TypeScript project with the packed tarball and @types/node installed from npm's cache. */
async function makeApp(examples: string[]): Promise<void> {
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
  writeJson('tsconfig.json', { compilerOptions, files: examples });
  writeJson('tsconfig.bad.json', { extends: './tsconfig.json', compilerOptions: { noEmit: true }, files: ['bad.ts'] });
  writeFileSync(path.join(app, 'bad.ts'), BAD);
}

before(async () => {
  const examples = docExamples();
  assert.deepEqual([...examples.keys()], ['run.ts', 'cancel.ts', 'curriculum.ts', 'schedule.ts']);
  await makeApp([...examples.keys()]);
  for (const [file, text] of examples) writeFileSync(path.join(app, file), text);
  mkdirSync(path.join(baseDir, 'configs'), { recursive: true });
  for (const file of ['demo.yaml', 'demo_tasks.jsonl', 'nightly.yaml'])
    copyFileSync(path.join(repoRoot, 'configs', file), path.join(baseDir, 'configs', file));
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
});

after(async () => {
  await stack?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Runs a compiled example in the app, Temporal named by a config-file profile, the queue by variable. */
async function runExample(file: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env = stack!.env;
  const configFile = path.join(root, 'temporal.toml');
  writeFileSync(
    configFile,
    `[profile.packed]\naddress = "${env.address}"\nnamespace = "${env.namespace ?? 'default'}"\n`,
  );
  const { TEMPORAL_ADDRESS: _address, TEMPORAL_NAMESPACE: _namespace, ...inherited } = process.env;
  return run(process.execPath, [path.join('build', file), ...args], {
    cwd: app,
    timeout: 240_000,
    env: {
      ...inherited,
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'packed',
      PIVOT_MINER_TASK_QUEUE: TASK_QUEUE,
    },
  });
}

const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as unknown;

test("docs/client.md's examples compile against the packed client's types; misuse of them does not", async () => {
  const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
    (err: { stdout: string }) => assert.fail(`tsc refused the examples:\n${err.stdout}`),
  );
  assert.equal(compiled.stdout, '');
  const refused = await run(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], { cwd: app }).then(
    () => assert.fail('tsc accepted bad.ts'),
    (err: { stdout: string }) => err.stdout,
  );
  assert.match(refused, /bad\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  assert.match(refused, /bad\.ts\(6,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
});

let mined: PivotMiningResult | undefined;

test('run.js starts a demo run on the queue the environment names and follows it to its dataset', async () => {
  const { stdout, stderr } = await runExample('run.js', ['configs/demo.yaml', 'packed-client-run']);
  const result = lastLine(stdout) as PivotMiningResult;
  assert.equal(result.runDir, path.join(baseDir, 'artifacts', 'runs', 'packed-client-run'));
  const rows = readJsonlSync(result.pivotsPath);
  assert.ok(rows.length > 0);
  assert.equal(rows.length, result.counts.published);
  assert.match(stderr, /^stage: \w+$/m, 'followPivotMining reported no progress');
  const described = await stack!.env.client.workflow.getHandle('packed-client-run').describe();
  assert.equal(described.taskQueue, TASK_QUEUE);
  mined = result;
});

test('cancel.js cancels a running run', async () => {
  await stack!.env.client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: 'packed-client-cancelled',
    args: [{ config_path: 'configs/demo.yaml', run_id: 'packed-client-cancelled' }],
  });
  const { stdout } = await runExample('cancel.js', ['packed-client-cancelled']);
  assert.equal(stdout.trim(), 'cancelled');
});

test('curriculum.js starts a curriculum on the mined pool, and later calls only send checkpoints', async () => {
  assert.ok(mined, 'needs the run above');
  const pool = path.relative(baseDir, mined.pivotsPath);
  const first = lastLine(
    (await runExample('curriculum.js', ['packed-curriculum', '1', 'configs/nightly.yaml', pool])).stdout,
  ) as CurriculumRound;
  const second = lastLine((await runExample('curriculum.js', ['packed-curriculum', '3'])).stdout) as CurriculumRound;
  assert.deepEqual([first.round, first.trainingStep, second.round, second.trainingStep], [1, 1, 2, 3]);
  assert.equal(first.poolSize, mined.counts.published);
  assert.equal(readJsonlSync(second.pivotsPath).length, second.kept);
  const handle = stack!.env.client.workflow.getHandle('packed-curriculum');
  assert.equal((await handle.describe()).taskQueue, TASK_QUEUE);
  await handle.cancel();
});

test('schedule.js creates a paused nightly schedule that starts its runs on the same queue', async () => {
  const { stdout } = await runExample('schedule.js', ['packed-nightly', 'configs/nightly.yaml']);
  assert.deepEqual(
    (lastLine(stdout) as { scheduleId: string; paused: boolean; workflowType: string }[]).map(
      ({ scheduleId, paused, workflowType }) => ({ scheduleId, paused, workflowType }),
    ),
    [{ scheduleId: 'packed-nightly', paused: true, workflowType: 'nightlyMiningWorkflow' }],
  );
  const schedule = stack!.env.client.schedule.getHandle('packed-nightly');
  const { action } = await schedule.describe();
  assert.equal(action.type === 'startWorkflow' ? action.taskQueue : null, TASK_QUEUE);
  await schedule.delete();
});
