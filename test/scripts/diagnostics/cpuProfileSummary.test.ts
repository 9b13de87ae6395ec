import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { summarizeDir, summarizeThread } from '../../../scripts/diagnostics/cpuProfileSummary';

const hook = path.resolve(__dirname, '../../../scripts/diagnostics/cpuProfile.cjs');

test('the profiler hook writes slices for each thread of a process it is preloaded into, and the summary finds the busy function', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cpu-profile-'));
  try {
    // A main thread that spins in a named function and a worker thread that sleeps, as a bench
    // worker's main thread works while its workflow thread mostly waits.
    const script = `
      const { Worker } = require('node:worker_threads');
      new Worker('setTimeout(() => {}, 4000)', { eval: true });
      function spinForTheProfiler(ms) { const t = Date.now() + ms; let x = 0; while (Date.now() < t) x++; return x; }
      spinForTheProfiler(1200);
      setTimeout(() => process.exit(0), 2500);`;
    const child = spawn(process.execPath, ['-e', script], {
      env: {
        ...process.env,
        NODE_OPTIONS: `--require ${hook}`,
        PIVOT_MINER_CPU_PROFILE_DIR: dir,
        PIVOT_MINER_CPU_PROFILE_SLICE_S: '1',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
    const threads = summarizeDir(dir);
    const main = threads.find((t) => t.thread === `${child.pid}-t0`);
    const worker = threads.find((t) => t.thread === `${child.pid}-t1`);
    assert.ok(main && worker, `profiles of both threads: ${threads.map((t) => t.thread).join(', ')}`);
    const [top] = main.functions;
    assert.match(top?.name ?? '', /^spinForTheProfiler /);
    assert.ok(main.busyMs > 500, `main thread busy ${main.busyMs} ms`);
    assert.ok(worker.busyMs < worker.totalMs / 2, `worker thread busy ${worker.busyMs} of ${worker.totalMs} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the summary adds self time across slices and leaves idle samples out of the busy share', () => {
  const frame = (functionName: string) => ({ functionName, url: 'file:///x.js', lineNumber: 0 });
  const slice = {
    nodes: [
      { id: 1, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
      { id: 2, callFrame: frame('work') },
      { id: 3, callFrame: frame('') },
    ],
    samples: [1, 2, 2, 3],
    timeDeltas: [4000, 1000, 2000, 500],
  };
  const summary = summarizeThread('1-t0', [slice, slice]);
  assert.equal(summary.totalMs, 15);
  assert.equal(summary.busyMs, 7);
  assert.deepEqual(summary.functions, [
    { name: 'work file:///x.js:1', ms: 6 },
    { name: '(anonymous) file:///x.js:1', ms: 1 },
  ]);
});
