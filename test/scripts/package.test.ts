import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/lib/net';
import { waitForPollers } from '../../scripts/lib/pollers';
import { temporalBinary } from '../../scripts/lib/temporalCli';
import { startTestTemporal } from '../helpers/temporal';

// The package as a user gets it: `npm pack` of this checkout, installed into an empty directory with
// nothing of the checkout beside it, then its command run from there. dist/ comes in the tarball
// (prepack builds it), the demo reads its config and tasks from the package and writes under the
// directory it is run in, and a worker starts and polls.

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');
const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-package-'));
const app = path.join(root, 'app');
const installed = path.join(app, 'node_modules', 'pivot-miner');
after(() => rmSync(root, { recursive: true, force: true }));

/** Runs the installed command in the app directory; its environment names the Temporal CLI only. */
function pivotMiner(args: string[], env: NodeJS.ProcessEnv = {}) {
  return run('npx', ['--no-install', 'pivot-miner', ...args], {
    cwd: app,
    env: { ...process.env, TEMPORAL_BIN: temporalBinary(), ...env },
    maxBuffer: 1 << 24,
  });
}

before(async () => {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', root], {
    cwd: repoRoot,
    maxBuffer: 1 << 24,
  });
  const tarball = path.join(root, stdout.trim().split('\n').at(-1)!);
  mkdirSync(app);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: app,
    maxBuffer: 1 << 24,
  });
});

test('the tarball ships the build, the licence and what the CLI runs, and no sources or tests', () => {
  for (const file of ['dist/cli.js', 'dist/workflow-bundle.js', 'dist/strictJson.wasm', 'LICENSE', 'NOTICE'])
    assert.ok(existsSync(path.join(installed, file)), `${file} is not in the package`);
  for (const file of ['bin/pivot-miner', 'scripts/ensure-temporal.sh', 'configs/demo.yaml', 'configs/demo_tasks.jsonl'])
    assert.ok(existsSync(path.join(installed, file)), `${file} is not in the package`);
  for (const dir of ['test', 'activities', 'workflows', 'gym', 'tsconfig.json'])
    assert.ok(!existsSync(path.join(installed, dir)), `${dir} should not be in the package`);
});

test('pivot-miner --help runs from the installed package', { timeout: 120_000 }, async () => {
  const { stdout } = await pivotMiner(['--help']);
  for (const command of ['demo', 'run', 'worker', 'validate'])
    assert.match(stdout, new RegExp(`^  ${command}\\b`, 'm'));
});

test(
  'pivot-miner demo runs from the installed package and prints the pivots path last',
  { timeout: 600_000 },
  async () => {
    const port = await freePort();
    const { stdout } = await pivotMiner(['demo'], { PIVOT_MINER_DEV_PORT: String(port) });
    const pivots = stdout.trimEnd().split('\n').at(-1)!;
    assert.equal(path.dirname(path.dirname(path.dirname(path.dirname(pivots)))), path.join(app, 'artifacts'));
    assert.match(pivots, /\/artifacts\/runs\/pivot-mining-demo-[^/]+\/dataset\/pivots\.jsonl$/);
    assert.ok(statSync(pivots).size > 0, `${pivots} is empty`);
    // Everything the run wrote is under the app directory; the package is read, never written.
    assert.deepEqual(readdirSync(installed).sort(), [
      'LICENSE',
      'NOTICE',
      'README.md',
      'bin',
      'configs',
      'dist',
      'package.json',
      'scripts',
    ]);
    const validated = await pivotMiner(['validate', '--path', pivots]);
    assert.match(validated.stdout, /^rows: [1-9]\d*\n/);
  },
);

test(
  'pivot-miner worker from the installed package polls the task queue, and stops on SIGTERM',
  { timeout: 300_000 },
  async () => {
    const env = await startTestTemporal();
    try {
      const identity = `package-test-${process.pid}`;
      const taskQueue = `package-test-${process.pid}`;
      // The command npx runs, started directly: npx does not pass SIGTERM on to it.
      const worker = spawn(path.join(app, 'node_modules', '.bin', 'pivot-miner'), ['worker'], {
        cwd: app,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: env.address,
          PIVOT_MINER_TASK_QUEUE: taskQueue,
          PIVOT_MINER_WORKER_IDENTITY: identity,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = once(worker, 'exit');
      try {
        await waitForPollers(env.client, taskQueue, [identity], 120_000);
      } finally {
        worker.kill('SIGTERM');
      }
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      assert.ok(code === 0 || signal === 'SIGTERM', `worker exited with ${code ?? signal}`);
    } finally {
      await env.teardown();
    }
  },
);
