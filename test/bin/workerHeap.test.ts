import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';

// A worker runs with a capped V8 heap and malloc arenas: `pivot-miner worker` started without the
// flags starts itself again with them, passes signals on, and never leaves its child running when it is killed.

const repoRoot = path.resolve(__dirname, '../..');
const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

test('the heap flag comes from PIVOT_MINER_WORKER_HEAP_MB, 1024 MB by default, none for 0', () => {
  assert.deepEqual(workerHeapArgs({}), ['--max-old-space-size=1024']);
  assert.deepEqual(workerHeapArgs({ PIVOT_MINER_WORKER_HEAP_MB: ' 512 ' }), ['--max-old-space-size=512']);
  assert.deepEqual(workerHeapArgs({ PIVOT_MINER_WORKER_HEAP_MB: '0' }), []);
  assert.throws(
    () => workerHeapArgs({ PIVOT_MINER_WORKER_HEAP_MB: '1.5g' }),
    /PIVOT_MINER_WORKER_HEAP_MB: 1\.5g is not a whole number of megabytes/,
  );
});

test("malloc's arenas are capped and its mmap threshold held, each unless the caller set it or turned the memory settings off", () => {
  assert.deepEqual(workerProcessEnv({ A: 'b' }), { A: 'b', MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' });
  assert.deepEqual(workerProcessEnv({ MALLOC_ARENA_MAX: '8' }), {
    MALLOC_ARENA_MAX: '8',
    MALLOC_MMAP_THRESHOLD_: '131072',
  });
  assert.deepEqual(workerProcessEnv({ MALLOC_MMAP_THRESHOLD_: '65536' }), {
    MALLOC_ARENA_MAX: '2',
    MALLOC_MMAP_THRESHOLD_: '65536',
  });
  assert.deepEqual(workerProcessEnv({ PIVOT_MINER_WORKER_HEAP_MB: '0' }), { PIVOT_MINER_WORKER_HEAP_MB: '0' });
});

/** `pivot-miner worker` against a port nothing listens on, so it sits retrying its connection. */
function startWorker(): ChildProcess {
  return spawn(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), 'worker'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: '127.0.0.1:9',
      PIVOT_MINER_CONNECT_TIMEOUT_S: '120',
      PIVOT_MINER_WORKER_HEAP_MB: '',
    },
    stdio: 'ignore',
  });
}

/**
 * The worker child, once it runs its own program: a child seen between its fork and its exec shows
 * the wrapper's command line, or none at all while the exec is under way (seen on a loaded host).
 */
async function childOf(pid: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    const child = children ? Number(children.split(' ')[0]) : undefined;
    const own = child === undefined ? '' : cmdline(child).join(' ');
    if (child !== undefined && own.trim() !== '' && own !== cmdline(pid).join(' ')) return child;
    await sleep(100);
  }
  throw new Error(`process ${pid} started no child that ran its own program`);
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
  return !alive(pid);
}

test('a worker started without the flag runs in a child with it, and SIGTERM reaches that child', async () => {
  const wrapper = startWorker();
  const worker = await childOf(wrapper.pid!);
  assert.ok(cmdline(worker).includes('--max-old-space-size=1024'), cmdline(worker).join(' '));
  const environ = readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0');
  assert.ok(
    environ.includes('MALLOC_ARENA_MAX=2') && environ.includes('MALLOC_MMAP_THRESHOLD_=131072'),
    'malloc settings in the child',
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    wrapper.once('exit', (_code, signal) => resolve(signal)),
  );
  wrapper.kill('SIGTERM');
  assert.equal(await exited, 'SIGTERM');
  assert.ok(await gone(worker), 'the worker child is gone');
});

test('a killed wrapper takes its worker with it', async () => {
  const wrapper = startWorker();
  const worker = await childOf(wrapper.pid!);
  wrapper.kill('SIGKILL');
  assert.ok(await gone(worker), 'the worker child is gone');
});

test('a worker started with the flag runs as it is, in one process', async () => {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=700', path.join(repoRoot, 'bin/pivot-miner.js'), 'worker'],
    {
      cwd: repoRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:9', PIVOT_MINER_CONNECT_TIMEOUT_S: '120' },
      stdio: 'ignore',
    },
  );
  await sleep(3000);
  assert.equal(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim(), '');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
});
