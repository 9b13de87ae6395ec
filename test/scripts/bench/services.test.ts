import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { startSimulatorProcess } from '../../../scripts/bench/services';

// --pin-simulators rests on this: the simulator process, every thread of it, on the one CPU asked for.

/** The CPUs a thread may run on, as taskset prints them (`pid 12's current affinity list: 0`). */
const affinityOf = (id: string) =>
  execFileSync('taskset', ['-c', '-p', id], { encoding: 'utf8' }).trim().split(': ')[1];

test('simulators started on one CPU run every thread there, and answer', async () => {
  const sims = await startSimulatorProcess(7, { cpu: 0 });
  try {
    const threads = execFileSync('ls', [`/proc/${sims.pid}/task`], { encoding: 'utf8' })
      .split('\n')
      .filter((t) => t !== '');
    assert.ok(threads.length > 1, 'a Node process has helper threads');
    for (const thread of threads) assert.equal(affinityOf(thread), '0', `thread ${thread}`);
    const res = await fetch(new URL('/global_config_dict_yaml', sims.urls.head));
    assert.equal(res.status, 200);
  } finally {
    await sims.stop();
  }
});
