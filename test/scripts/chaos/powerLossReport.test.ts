import assert from 'node:assert/strict';
import { test } from 'node:test';
import { powerLossPassed, unnamedDiskErrors, type PowerLossReport } from '../../../scripts/chaos/powerLossReport';

const named =
  'mergeChunks attempt 2: /tmp/a/runs/chaos/local_profile.merge.rollouts.jsonl: ENOSPC: no space left on device, write';
const opened = "runChunk attempt 3: EIO: i/o error, open '/tmp/a/runs/chaos/local_profile.chunk-0003.jsonl'";
const bare = 'finishStage attempt 2: ENOSPC: no space left on device, write';

test('a disk error must say which file it hit', () => {
  assert.deepEqual(unnamedDiskErrors([named, opened, bare, 'runChunk attempt 2: engine timed out']), [bare]);
});

test('the disk-full case fails on an error that names no file, or when no disk error was seen', () => {
  const report = (failures: string[]): PowerLossReport => ({
    label: 'test',
    cuts: Array.from({ length: 20 }, () => ({ stage: 'collect', what: 'mid-chunk', at: 'write x' })),
    missed: [],
    finished: true,
    outcome: 'completed',
    identical: true,
    differing: [],
    duplicate_keys: 0,
    missing_keys: 0,
    unexpected_worker_exits: 0,
    wall_seconds: { undisturbed: 1, power_loss: 1 },
    disk_full: { recovered: true, identical: true, differing: [], enospc: 3, eio: 3, failures, published_changed: [] },
    work_dir: '/tmp/x',
  });
  assert.equal(powerLossPassed(report([named, opened]), 20), true);
  assert.equal(powerLossPassed(report([named, bare]), 20), false);
  assert.equal(powerLossPassed(report([]), 20), false);
});
