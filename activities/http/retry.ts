import { setTimeout as sleep } from 'node:timers/promises';
import { RequestFailure } from './client';

// Per-request retries live here rather than in Temporal activity retries because one chunk holds
// many requests: retrying the whole chunk for one 503 would redo finished work. Temporal still
// retries the chunk when the worker itself dies.

export interface RetryPolicy {
  maxAttempts: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export interface FailedAttempt {
  attempt: number;
  failure: RequestFailure;
}

export async function withRetries<T>(
  run: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  onFailedAttempt: (failed: FailedAttempt) => Promise<void>,
  signal?: AbortSignal,
  firstAttempt = 1,
): Promise<{ ok: true; value: T } | { ok: false; failure: RequestFailure }> {
  const initial = policy.initialDelayMs ?? 200;
  const max = policy.maxDelayMs ?? 10_000;
  for (let attempt = firstAttempt; ; attempt++) {
    try {
      return { ok: true, value: await run(attempt) };
    } catch (err) {
      // Only what a server did (HTTP status, timeout, connection, a bad body, a failure the agent
      // reported) is a failed attempt worth a sidecar line. Anything else is our own bug or a
      // non-retryable verdict (ConfigError): it fails the chunk, so Temporal retries and shows it.
      if (!(err instanceof RequestFailure)) throw err;
      const failure = err;
      if (failure.failureClass === 'cancelled' || signal?.aborted) throw failure;
      await onFailedAttempt({ attempt, failure });
      if (!failure.retryable || attempt >= policy.maxAttempts) return { ok: false, failure };
      // Full jitter keeps a fleet of workers from retrying in lockstep after a server restart.
      const backoff = Math.min(max, initial * 2 ** (attempt - firstAttempt));
      const delay = failure.retryAfterMs ?? Math.random() * backoff;
      await sleep(Math.min(delay, max * 6), undefined, { signal }).catch(() => undefined);
      if (signal?.aborted) throw new RequestFailure('cancelled', 'cancelled during backoff', false);
    }
  }
}
