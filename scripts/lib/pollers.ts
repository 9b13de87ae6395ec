import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';

/** temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY */
const ACTIVITY_TASK_QUEUE = 2;

/** Waits until a worker of each identity polls `taskQueue` for activities. A worker process is up
 * seconds after it is spawned; a run started before then may finish on the others alone. */
export async function waitForPollers(
  client: Client,
  taskQueue: string,
  identities: string[],
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await client.workflowService
      .describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: ACTIVITY_TASK_QUEUE,
      })
      .catch(() => undefined);
    const polling = new Set((described?.pollers ?? []).map((poller) => poller.identity));
    if (identities.every((identity) => polling.has(identity))) return;
    if (Date.now() > deadline)
      throw new Error(`workers ${identities.join(', ')} did not all poll ${taskQueue} within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}
