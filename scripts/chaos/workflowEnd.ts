import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { pivotMiningProgressQuery } from '../../contracts/temporal';
import { bounded } from '../lib/bounded';

// Waiting for a chaos run's workflow to end while its server restarts or its workers lose power.

/**
 * Waits for the workflow to close, riding out server restarts (calls fail while it is down); with
 * `timeoutMs`, throws once that much time has passed without it closing.
 */
export async function waitForResult(handle: WorkflowHandle, timeoutMs = Infinity): Promise<PivotMiningResult> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') return (await handle.result()) as PivotMiningResult;
    } catch (err) {
      if ((err as Error).name === 'WorkflowFailedError') throw err;
    }
    await sleep(1_000);
  }
  throw new Error(`workflow ${handle.workflowId} did not close within ${timeoutMs / 1000} s`);
}

export type Outcome = { result: PivotMiningResult } | { failure: string };

/** The workflow's result, or why there is none within `timeoutMs` (the workflow is then terminated). */
export async function settle(handle: WorkflowHandle, timeoutMs: number): Promise<Outcome> {
  // Cancelled once the race is decided, or the pending timer would keep the process alive.
  const timer = new AbortController();
  const timeout = sleep(timeoutMs, undefined, { signal: timer.signal }).then(
    () => ({ failure: `not finished within ${timeoutMs / 1000} s` }),
    () => ({ failure: 'cancelled' }),
  );
  const ended = waitForResult(handle).then(
    (result) => ({ result }),
    (err: unknown) => ({ failure: `workflow failed: ${failureText(err)}` }),
  );
  const outcome = await Promise.race([ended, timeout]);
  timer.abort();
  if ('failure' in outcome) await handle.terminate('judged by the chaos harness').catch(() => undefined);
  return outcome;
}

function failureText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause ?? err.message;
}

/** The run's stage from its progress query, or undefined when no worker answers within 2 s (a cut). */
export function runStageOf(handle: WorkflowHandle): Promise<string | undefined> {
  return bounded(handle.query(pivotMiningProgressQuery), 2_000, 'the run stage').then(
    (progress) => progress.stage,
    () => undefined,
  );
}
