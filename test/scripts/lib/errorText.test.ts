import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure, ActivityFailure, RetryState } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { errorText } from '../../../scripts/lib/errorText';

test('a failed run shows the reason at the end of its cause chain, not only "Workflow execution failed"', () => {
  const reason = ApplicationFailure.nonRetryable(
    'run run-a was started with another config …\n  seed: 7 -> 8',
    'RunIdentityMismatch',
  );
  const activity = new ActivityFailure(
    'Activity task failed',
    'prepareRun',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'worker',
    reason,
  );
  const text = errorText(
    new WorkflowFailedError('Workflow execution failed', activity, RetryState.NON_RETRYABLE_FAILURE),
  );
  assert.equal(
    text,
    'Workflow execution failed\n  caused by: Activity task failed\n  caused by: run run-a was started with another config …\n  seed: 7 -> 8',
  );
  assert.equal(errorText(new Error('plain')), 'plain');
  assert.equal(errorText('a string'), 'a string');
});
