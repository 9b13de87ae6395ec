import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { attemptToken, compareTokens, Fence, parseToken } from '../../activities/fence';

// The fence's own rules (docs/fencing.md): how attempts are ordered, and when a write looks at the
// fence directory rather than trusting the last look.

test('attempts order by when their activity was scheduled, then by attempt number', () => {
  const order = [attemptToken(10, 2), attemptToken(9, 7), attemptToken(10, 1), attemptToken(11, 1)]
    .sort(compareTokens)
    .map((t) => t.name);
  assert.deepEqual(order, ['9-7', '10-1', '10-2', '11-1']);
  assert.deepEqual(
    ['10-2.jsonl', '10-2_failures.jsonl', '10-2.rollouts.jsonl', '10-2.view', '10-2'].map((e) => parseToken(e)?.name),
    ['10-2', '10-2', '10-2', '10-2', '10-2'],
  );
  assert.equal(parseToken('digests.jsonl'), undefined);
  assert.equal(parseToken('10-2x.jsonl'), undefined);
});

test('a write right after a look trusts it; a write after a pause looks again and stops when superseded', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-fence-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const fence = new Fence(dir, attemptToken(10, 1), 'chunk 0');
  writeFileSync(path.join(dir, '10-1.jsonl'), '');
  await fence.check();
  // The successor starts; within the heartbeat's second this attempt's writes cost no look.
  writeFileSync(path.join(dir, '10-2.jsonl'), '');
  assert.equal(fence.beforeWrite(), undefined);
  // Paused longer than that (a stopped process, a hung NFS call), the next write looks first.
  t.mock.timers.tick(2500);
  const looking = fence.beforeWrite();
  assert.ok(looking);
  await assert.rejects(looking, (err: Error) => {
    assert.match(err.message, /chunk 0: attempt 10-1 was superseded by attempt 10-2/);
    return true;
  });
  assert.throws(() => fence.beforeWrite(), /superseded/);
});
