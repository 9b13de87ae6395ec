import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../../contracts/errors';
import { RequestFailure } from '../../../activities/http/client';
import { withRetries, type FailedAttempt } from '../../../activities/http/retry';

// Per-request retries record what a server did; our own bugs must not be recorded as data.

const fast = { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 };

test('a TypeError (a bug) propagates and is never a failure row', async () => {
  const recorded: FailedAttempt[] = [];
  let calls = 0;
  const bug = withRetries(
    async () => {
      calls++;
      return (undefined as unknown as { x: number }).x;
    },
    fast,
    async (failed) => void recorded.push(failed),
  );
  await assert.rejects(bug, TypeError);
  assert.equal(calls, 1);
  assert.deepEqual(recorded, []);
});

test('a non-retryable verdict (ConfigError) propagates too', async () => {
  const recorded: FailedAttempt[] = [];
  await assert.rejects(
    withRetries(
      async () => {
        throw new ConfigError('agent_ref.name "x" is no longer served');
      },
      fast,
      async (f) => void recorded.push(f),
    ),
    ConfigError,
  );
  assert.equal(recorded.length, 0);
});

test('HTTP failures become one row per attempt and are retried up to the limit', async () => {
  const recorded: string[] = [];
  let calls = 0;
  const outcome = await withRetries(
    async () => {
      calls++;
      if (calls < 3) throw new RequestFailure('http_5xx', 'answered 503', true);
      return 'ok';
    },
    fast,
    async ({ attempt, failure }) => void recorded.push(`${attempt} ${failure.failureClass}`),
  );
  assert.deepEqual(outcome, { ok: true, value: 'ok' });
  assert.deepEqual(recorded, ['1 http_5xx', '2 http_5xx']);
});

test('a non-retryable HTTP failure is one row and gives up', async () => {
  const recorded: string[] = [];
  const outcome = await withRetries(
    async () => {
      throw new RequestFailure('http_4xx', 'answered 422', false);
    },
    fast,
    async ({ attempt, failure }) => void recorded.push(`${attempt} ${failure.failureClass}`),
  );
  assert.equal(outcome.ok, false);
  assert.deepEqual(recorded, ['1 http_4xx']);
});
