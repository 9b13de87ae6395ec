import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { CollectStageResult } from '../../contracts/payloads';
import { temporalBinary } from '../../scripts/lib/temporalCli';
import { assertSameStageFiles, collectStageTest } from '../helpers/collectStage';

// An operator's `temporal activity pause`, `reset` and `unpause` (Temporal CLI, experimental) of
// running chunks. A running attempt learns of them at its next heartbeat, as a cancellation; the
// chunk must give up as cancelled, so that Temporal retries it (reset) or holds it until it is
// unpaused, and the stage must write the bytes of an undisturbed run.

const stage = collectStageTest('activity-pause', {
  // Every agent request answers 1 s late, one at a time: a chunk of 20 runs for about 20 s, longer
  // than the SDK waits before it sends a heartbeat (0.8 of the 15 s heartbeat timeout), so the
  // operator's pause and reset reach attempts that are still running.
  servers: { mode: 'embedded', faults: { agent: { slow_ms: 1_000, rules: [{ match: {}, kind: 'slow' }] } } },
  collect: {
    input_jsonl: 'configs/demo_tasks.jsonl',
    agent_name: 'demo_tool_agent',
    num_repeats: 2,
    chunk_size: 20,
    max_chunks_in_flight: 2,
    max_concurrency: 1,
  },
});

/** `temporal activity <args>` against the test's dev server, as an operator types it. */
async function temporalActivity(...args: string[]): Promise<void> {
  await promisify(execFile)(temporalBinary(), ['activity', ...args, '--address', stage.stack.env.address]);
}

const { PENDING_ACTIVITY_STATE_STARTED: STARTED, PENDING_ACTIVITY_STATE_PAUSED: PAUSED } =
  temporal.api.enums.v1.PendingActivityState;

type Pending = { activityId: string; state: temporal.api.enums.v1.PendingActivityState; attempt: number };

async function pendingChunks(handle: WorkflowHandle): Promise<Pending[]> {
  const { raw } = await handle.describe();
  return (raw.pendingActivities ?? [])
    .filter((a) => a.activityType?.name === 'runChunk')
    .map((a) => ({
      activityId: a.activityId ?? '',
      state: a.state ?? temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_UNSPECIFIED,
      attempt: a.attempt ?? 1,
    }));
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let waited = 0; waited < 120_000; waited += 200) {
    const found = await probe();
    if (found !== undefined) return found;
    await sleep(200);
  }
  throw new Error(`timed out waiting until ${what}`);
}

test('chunks paused, reset and unpaused by an operator write the undisturbed bytes', { timeout: 600_000 }, async () => {
  const reference = stage.input('reference');
  await (await stage.start('pause-reference', reference)).result();

  const subject = stage.input('paused');
  const handle = await stage.start('pause-me', subject);
  const [paused, reset] = await waitFor('two chunks run', async () => {
    const running = (await pendingChunks(handle)).filter((a) => a.state === STARTED);
    return running.length === 2 ? running : undefined;
  });
  await temporalActivity('pause', '--workflow-id', 'pause-me', '--activity-id', paused!.activityId, '--reason', 'test');
  await temporalActivity('reset', '--workflow-id', 'pause-me', '--activity-id', reset!.activityId);
  // The pause has taken: the running attempt gave up at its next heartbeat and the chunk waits.
  await waitFor('the paused chunk waits', async () => {
    const chunk = (await pendingChunks(handle)).find((a) => a.activityId === paused!.activityId);
    return chunk?.state === PAUSED ? chunk : undefined;
  });
  await temporalActivity('unpause', '--workflow-id', 'pause-me', '--activity-id', paused!.activityId);

  const result = (await handle.result()) as CollectStageResult;
  assert.equal(result.merge.completed, 40);
  // Both chunks ran a second attempt: the reset one after its cancelled first, the paused one once unpaused.
  const starts = ((await handle.fetchHistory()).events ?? []).flatMap(
    (e) => e.activityTaskStartedEventAttributes ?? [],
  );
  assert.equal(starts.filter((a) => (a.attempt ?? 1) >= 2).length, 2);
  assert.ok(starts.some((a) => a.lastFailure?.message === 'Activity reset'));
  assertSameStageFiles(subject, reference);
});
