import type { ActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE_ERROR_TYPES } from '../contracts/errors';

// Activity options shared by every workflow, so the retry rules (what is worth retrying, how often)
// are written once. Typed bad-input errors fail at once; everything else retries with backoff.

const retry = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
} as const;

/** Stage activities: file IO and short HTTP work, heartbeating while they stream. */
export const stageActivityOptions: ActivityOptions = {
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { ...retry, maximumAttempts: 10 },
};

/** Materialize, merge and profile: the same, with room for a large stage's files. */
export const collectStageActivityOptions: ActivityOptions = { ...stageActivityOptions, startToCloseTimeout: '2 hours' };

/** One chunk of rollouts: many attempts, since a SIGKILLed worker costs one. */
export const chunkActivityOptions: ActivityOptions = {
  startToCloseTimeout: '6 hours',
  // Short, because this is how a SIGKILLed worker's chunk is noticed and handed to another worker.
  heartbeatTimeout: '15 seconds',
  retry: { ...retry, maximumAttempts: 50 },
};
