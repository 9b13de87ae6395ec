import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { attemptToken, Fence, parseToken, supersedes, type AttemptIdentity } from '../../../activities/chunk/fence';

// The fence's own rules (docs/fencing.md): how attempts are ordered, that no two share a token, and
// when a write looks at the fence directory rather than trusting the last look.

const identity = (attemptMs: number, attempt: number, run = 'r1'): AttemptIdentity => ({ attemptMs, attempt, run });

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-fence-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('within a run the attempt Temporal scheduled later wins; across runs the one that started later', () => {
  const retry = attemptToken(1, identity(10, 2));
  const first = attemptToken(2, identity(5, 1));
  assert.ok(supersedes(retry, first), 'a retry supersedes its first attempt, whatever order they started in');
  assert.ok(!supersedes(first, retry));
  // `temporal activity reset`: attempt 1 again, scheduled after attempt 3 was.
  const reset = attemptToken(3, identity(20, 1));
  assert.ok(supersedes(reset, attemptToken(2, identity(15, 3))));
  // `temporal workflow reset`: a run with the old run's scheduled time and attempt count.
  const resetRun = attemptToken(4, identity(10, 2, 'r2'));
  assert.ok(supersedes(resetRun, retry) && !supersedes(retry, resetRun));
  assert.equal(resetRun.name, '4-10-2-r2');
  assert.deepEqual(
    ['4-10-2-r2.jsonl', '4-10-2-r2_failures.jsonl', '4-10-2-r2.rollouts.jsonl', '4-10-2-r2.view', '4-10-2-r2'].map(
      (e) => parseToken(e)?.name,
    ),
    Array(5).fill('4-10-2-r2'),
  );
  for (const entry of ['digests.jsonl', '4.seq', '10-2.jsonl', '4-10-2-r2x-.jsonl'])
    assert.equal(parseToken(entry), undefined, entry);
});

test('attempts claiming at once each take a sequence number of their own; the last to claim owns the step', async (t) => {
  const dir = tempDir(t);
  const claims = await Promise.allSettled(
    Array.from({ length: 12 }, () => Fence.claim(dir, 'chunk 0', identity(10, 1))),
  );
  const fences = claims.flatMap((c) => (c.status === 'fulfilled' ? [c.value] : []));
  const overtaken = claims.flatMap((c) => (c.status === 'rejected' ? [String(c.reason)] : []));
  for (const reason of overtaken) assert.match(reason, /superseded by attempt \d+-10-1-r1/);
  const seqs = fences.map((f) => f.token.seq);
  assert.equal(new Set(seqs).size, seqs.length);
  assert.ok(seqs.includes(12), `the twelfth number was taken and kept (${seqs.join(',')})`);
  // Each overtaken claim withdrew its marker; the kept ones stay.
  const markers = readdirSync(dir).filter((e) => e.endsWith('.seq'));
  assert.equal(markers.length, fences.length);
});

test('an attempt of the same run scheduled earlier than one already there creates nothing', async (t) => {
  const dir = tempDir(t);
  await Fence.claim(dir, 'chunk 0', identity(20, 2));
  const before = readdirSync(dir).sort();
  await assert.rejects(Fence.claim(dir, 'chunk 0', identity(10, 1)), /superseded by attempt 1-20-2-r1/);
  assert.deepEqual(readdirSync(dir).sort(), before);
  // An attempt of another run (a reset) is newer, however Temporal numbered it.
  const reset = await Fence.claim(dir, 'chunk 0', identity(10, 1, 'r2'));
  assert.equal(reset.token.seq, 2);
});

test('a write right after a look trusts it; a write after a pause looks again and stops when superseded', async (t) => {
  const dir = tempDir(t);
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const fence = await Fence.claim(dir, 'chunk 0', identity(10, 1));
  await fence.check();
  // The successor starts; within the heartbeat's second this attempt's writes cost no look.
  writeFileSync(path.join(dir, '2-20-2-r1.claim'), '');
  assert.equal(fence.beforeWrite(), undefined);
  // Paused longer than that (a stopped process, a hung NFS call), the next write looks first.
  t.mock.timers.tick(2500);
  const looking = fence.beforeWrite();
  assert.ok(looking);
  await assert.rejects(looking, (err: Error) => {
    assert.match(err.message, /chunk 0: attempt 1-10-1-r1 was superseded by attempt 2-20-2-r1/);
    return true;
  });
  assert.throws(() => fence.beforeWrite(), /superseded/);
});
