import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { childPidsMatching, cpuSeconds, cpuSnapshot, cpuUsed, startCpuTrace } from '../../../scripts/bench/cpu';

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
  const child = spawn(process.execPath, [
    '-e',
    'const t = Date.now() + 400; while (Date.now() < t); setTimeout(() => {}, 5000)',
    'cpu-test-marker',
  ]);
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

test("a CPU trace charges a busy span with this process's CPU and an idle span with next to none", async () => {
  const trace = startCpuTrace({ self: process.pid }, 20);
  const idleFrom = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 400));
  const idleTo = Date.now();
  const until = process.cpuUsage().user + 400_000;
  while (process.cpuUsage().user < until);
  // Let the timer take a sample after the spin, since samples only come between ticks.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const busyTo = Date.now();
  const cpu = trace.stop();
  const idle = cpu.between(idleFrom, idleTo).self!;
  const busy = cpu.between(idleTo, busyTo).self!;
  assert.ok(busy >= 0.25, `busy span charged ${busy} s`);
  assert.ok(idle < busy / 2, `idle span charged ${idle} s against ${busy} s busy`);
});
