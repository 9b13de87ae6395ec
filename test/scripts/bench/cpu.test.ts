import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { childPidsMatching, cpuSeconds, cpuSnapshot, cpuUsed } from '../../../scripts/bench/cpu';

test('cpuSeconds grows by about the CPU time this process burns, and is 0 for a pid that is gone', () => {
  const before = cpuSeconds(process.pid);
  const until = process.cpuUsage().user + 300_000;
  while (process.cpuUsage().user < until);
  const burnt = cpuSeconds(process.pid) - before;
  // /proc counts in 10 ms ticks; 0.3 s of user time must show as at least 0.2 s.
  assert.ok(burnt >= 0.2 && burnt < 5, `burnt ${burnt} s`);
  assert.equal(cpuSeconds(2 ** 22 + 12345), 0);
});

test('a child process is found by its command line and metered by name', async () => {
  const child = spawn(process.execPath, ['-e', 'const t = Date.now() + 400; while (Date.now() < t); setTimeout(() => {}, 5000)', 'cpu-test-marker']);
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(childPidsMatching('cpu-test-marker'), [child.pid]);
    const first = cpuSnapshot({ spinner: child.pid! });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const used = cpuUsed(first, cpuSnapshot({ spinner: child.pid! }));
    assert.ok(used.spinner! > 0.05, `the spinning child used ${used.spinner} s`);
  } finally {
    child.kill();
  }
});
