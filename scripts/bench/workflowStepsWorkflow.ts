import { proxyActivities } from '@temporalio/workflow';

// The workflow of scripts/bench/workflowSteps.ts, in a file of its own because the worker bundles it.

const { noop } = proxyActivities<{ noop(step: number): Promise<number> }>({ startToCloseTimeout: '1 minute' });

/** Awaits `steps` activities that do nothing, one after another. */
export async function workflowStepsWorkflow(steps: number): Promise<number> {
  let done = 0;
  for (let step = 0; step < steps; step++) done += (await noop(step)) === step ? 1 : 0;
  return done;
}
