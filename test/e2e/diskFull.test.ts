import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getProgress, type ActivityRetry } from '../../client';
import { waitingLine } from '../../scripts/commands/status';
import type { PivotMiningResult } from '../../contracts/payloads';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// A full disk under a running pipeline: the artifacts root is a tmpfs shrunk to what is already on
// it. The failing step must name the file and the errno, `pivot-miner status` must say what the run
// waits for, the run published before must stay as it was, and once the room is back the run must
// finish with the bytes of a run that never saw a full disk.

const TASK_QUEUE = 'disk-full-test';
const ROOM = '64m';
const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-disk-full-'));
let stack: WorkerTestEnv;

const remount = (size: string) => execFileSync('mount', ['-o', `remount,size=${size}`, root]);

before(async () => {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${ROOM}`, 'tmpfs', root]);
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: root });
});

after(async () => {
  await stack?.stop();
  // Lazy: a step that failed the test may still hold a file open here; the mount goes once it closes.
  execFileSync('umount', ['-l', root]);
  rmSync(root, { recursive: true, force: true });
});

/** sha256 of every file directly in a run directory. */
function digests(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (statSync(file).isFile()) out.set(name, createHash('sha256').update(readFileSync(file)).digest('hex'));
  }
  return out;
}

/** Polls the run's progress until an activity waits after a disk error. */
async function diskErrorWaitedOn(workflowId: string, timeoutMs: number): Promise<ActivityRetry> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const progress = await getProgress(stack.env.client, workflowId);
    const retry = progress.waiting.find((r) => /ENOSPC|EIO/.test(r.lastFailure));
    if (retry) return retry;
    await sleep(250);
  }
  assert.fail(`no activity of ${workflowId} failed on the full disk within ${timeoutMs} ms`);
}

test('a full disk fails the step naming file and errno, and the run finishes once there is room', async (t) => {
  const client = stack.env.client;
  const reference = await runPivotMining(client, {
    taskQueue: TASK_QUEUE,
    configPath: 'configs/demo.yaml',
    runId: 'ref',
  });
  const published = digests(reference.runDir);

  // What the reference run left on the disk, plus a little: the next run fills it within its first steps.
  const fs = statfsSync(root);
  remount(`${(fs.blocks - fs.bfree) * fs.bsize + 64 * 1024}`);
  const handle = await client.workflow.start('pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: 'full',
    args: [{ config_path: 'configs/demo.yaml', run_id: 'full' }],
  });
  const retry = await diskErrorWaitedOn('full', 120_000);
  assert.match(retry.lastFailure, new RegExp(`${root}/\\S+: (ENOSPC|EIO)`), 'the error names the file');
  assert.ok(retry.attempt >= 2, `attempt ${retry.attempt}`);
  const line = waitingLine(retry, new Date());
  t.diagnostic(line);
  assert.match(line, /^waiting: \w+ of full\S*, attempt \d+ (in \d+ s|running), after: .*ENOSPC/);

  remount(ROOM);
  const result = (await handle.result()) as PivotMiningResult;
  assert.deepEqual(digests(reference.runDir), published, 'the run published before is untouched');
  const after = digests(result.runDir);
  for (const name of ['rollouts.jsonl', 'pivots.jsonl', 'local_profile_reward_profiling.jsonl']) {
    assert.equal(after.get(name), published.get(name), `${name} has the undisturbed bytes`);
  }
});
