import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { freePort, portOpen } from '../../../scripts/lib/net';

// `pivot-miner dev` as docs/cli.md describes it: the port from PIVOT_MINER_DEV_PORT when --port is
// not given, and a Temporal server already listening there reused rather than started again (and
// left running when the second command stops).

const repoRoot = path.resolve(__dirname, '../../..');
const started: ChildProcess[] = [];
const dirs: string[] = [];

// A failed test still stops its dev commands by SIGINT, so each stops the Temporal server it started.
after(async () => {
  for (const child of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await Promise.race([exited, sleep(20_000).then(() => child.kill('SIGKILL'))]);
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

interface DevProcess {
  child: ChildProcess;
  /** Everything it printed on stderr until it said its worker is up. */
  stderr: string;
}

async function startDev(env: NodeJS.ProcessEnv): Promise<DevProcess> {
  const cwd = await mkdtemp(path.join(tmpdir(), 'dev-cmd-'));
  dirs.push(cwd);
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), 'dev'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not come up in 120 s:\n${stderr}`)), 120_000);
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('worker on task queue')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`dev exited (${code}) before it was up:\n${stderr}`));
    });
  });
  return { child, stderr };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  return exited;
}

test('dev listens on PIVOT_MINER_DEV_PORT, and a second dev reuses that server and leaves it up', async () => {
  const port = await freePort();
  const first = await startDev({ PIVOT_MINER_DEV_PORT: String(port) });
  assert.match(first.stderr, new RegExp(`Temporal: 127\\.0\\.0\\.1:${port} `));
  assert.ok(await portOpen(port), `nothing listens on ${port}`);

  const second = await startDev({ PIVOT_MINER_DEV_PORT: String(port) });
  assert.match(second.stderr, new RegExp(`reusing the Temporal server already listening on 127\\.0\\.0\\.1:${port}`));
  await stop(second.child);
  assert.ok(await portOpen(port), 'the second dev stopped the server the first one started');

  await stop(first.child);
  assert.equal(await portOpen(port), false, 'the first dev left its server running');
});
