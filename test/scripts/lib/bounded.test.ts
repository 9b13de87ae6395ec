import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bounded, StallError } from '../../../scripts/lib/bounded';

// A bounded wait passes on what settles in time, and names what it waited for when nothing does.

test('a promise that settles in time passes through, value or error', async () => {
  assert.equal(await bounded(sleep(10, 'done'), 1_000, 'a short sleep'), 'done');
  await assert.rejects(bounded(Promise.reject(new Error('own failure')), 1_000, 'a failing call'), /own failure/);
});

test('a promise that does not settle in time fails naming what was awaited', async () => {
  const never = new Promise<never>(() => undefined);
  const t0 = Date.now();
  await assert.rejects(bounded(never, 50, 'the daemon answering cut'), (err: unknown) => {
    assert.ok(err instanceof StallError);
    assert.equal(err.message, 'the daemon answering cut: nothing within 0.05 s');
    return true;
  });
  assert.ok(Date.now() - t0 < 1_000);
});
