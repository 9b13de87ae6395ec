import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { prefetchSegment, removeEarlyProfiling } from '../../../activities/early/prefetch';
import { stallFirstAt } from '../../helpers/stallFirst';
import type { PrefetchSegment, RunPlan } from '../../../contracts/payloads';
import { collectPlan, materialize, outPrefixOf, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';

// An early segment (finished collect rows, copied and converted) is built under its attempt's own
// name and renamed into place whole, fenced like every writer: an attempt that wakes after a newer
// one, or after the run removed early profiling's files, leaves nothing behind.

/** A trajectory with one tool call: its first rollout of each task passes, the second fails (a mixed task). */
function answer(row: Record<string, any>) {
  const id = `${row._ng_task_index}-${row._ng_rollout_index}`;
  return {
    responses_create_params: row.responses_create_params,
    response: {
      id: `resp-${id}`,
      output: [
        { type: 'function_call', id: `fc-${id}`, call_id: `c-${id}`, name: 'lookup', arguments: '{"q":"x"}' },
        { type: 'function_call_output', call_id: `c-${id}`, output: '42' },
        {
          type: 'message',
          id: `m-${id}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: '42', annotations: [] }],
        },
      ],
    },
    reward: row._ng_rollout_index === 0 ? 1 : 0,
  };
}

const gym = fakeGymForFile({ alpha: answer }, 'pivot-miner-segment-');

/** A run whose collect has finished every chunk: 2 tasks × 2 repeats, chunks of 2. */
async function collectedRun(): Promise<{ plan: RunPlan; chunks: number }> {
  const dir = gym.freshDir();
  const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }];
  writeJsonl(path.join(dir, 'tasks.jsonl'), [
    taskRow('a', { responses_create_params: { input: [{ role: 'user', content: 'task a' }], tools } }),
    taskRow('b', { responses_create_params: { input: [{ role: 'user', content: 'task b' }], tools } }),
  ]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 2, chunk_size: 2 });
  const { chunks } = await materialize(plan);
  await runChunks(plan, chunks);
  return { plan, chunks };
}

/** An attempt of early profiling's activity (`runId` tells the workflow run), scheduled at `scheduled`. */
const attempt = (scheduled: number, n = 1, runId = 'early-a') =>
  new MockActivityEnvironment({
    scheduledTimestampMs: scheduled,
    currentAttemptScheduledTimestampMs: scheduled,
    attempt: n,
    workflowExecution: { workflowId: 'run/prefetch', runId },
  });

const segmentInput = (plan: RunPlan, chunks: number) => ({
  plan,
  collectPrefix: outPrefixOf(plan),
  fromRow: 0,
  finishedChunks: chunks,
  final: true,
});

test('a segment is built whole under its own name, its candidates at the final path', async () => {
  const { plan, chunks } = await collectedRun();
  const segment: PrefetchSegment = await attempt(1000).run(prefetchSegment, segmentInput(plan, chunks));
  assert.ok(segment.candidates > 0, 'the mixed tasks give candidates');
  assert.equal(segment.dir, path.join(plan.runDir, 'prefetch', 'rows-0-4'));
  assert.equal(segment.candidatesPath, path.join(segment.dir!, 'candidates.jsonl'));
  assert.ok(existsSync(segment.candidatesPath!));
  assert.ok(existsSync(path.join(segment.dir!, 'rollouts.jsonl')));
  assert.deepEqual(readdirSync(path.join(plan.runDir, 'prefetch')), ['rows-0-4'], 'no staging left');
});

test('a segment built again (a resumed run) keeps the profile its earlier build began', async () => {
  const { plan, chunks } = await collectedRun();
  const first: PrefetchSegment = await attempt(1000).run(prefetchSegment, segmentInput(plan, chunks));
  const shard = path.join(first.dir!, 'local_profile_shards', '000000.attempts', 'profiled.jsonl');
  mkdirSync(path.dirname(shard), { recursive: true });
  writeFileSync(shard, '{}\n');
  const candidates = readFileSync(first.candidatesPath!, 'utf8');
  const again: PrefetchSegment = await attempt(9000, 1, 'early-b').run(prefetchSegment, segmentInput(plan, chunks));
  assert.equal(again.dir, first.dir);
  assert.equal(readFileSync(again.candidatesPath!, 'utf8'), candidates, 'the same finished rows convert alike');
  assert.ok(existsSync(shard), "the earlier profile's shards are kept");
  assert.deepEqual(readdirSync(path.join(plan.runDir, 'prefetch')), ['rows-0-4'], 'no staging left');
});

test('a segment attempt that wakes after its retry and the removal writes nothing, and leaves nothing', async () => {
  const { plan, chunks } = await collectedRun();
  const stall = stallFirstAt('segment.built');
  try {
    // Attempt 1 stalls (a paused worker) with its segment built, just before it renames it in place.
    const stalled = attempt(1000).run(prefetchSegment, segmentInput(plan, chunks));
    await stall.held();
    const retried: PrefetchSegment = await attempt(1000, 2).run(prefetchSegment, segmentInput(plan, chunks));
    assert.ok(existsSync(retried.candidatesPath!));
    // The run is done with early profiling and removes its files; then the stalled attempt wakes.
    await attempt(5000, 1, 'run-a').run(removeEarlyProfiling, { runDir: plan.runDir, part: 'segments' as const });
    stall.wake();
    await assert.rejects(stalled, /superseded/);
    assert.equal(existsSync(path.join(plan.runDir, 'prefetch')), false, 'nothing of early profiling is back');
  } finally {
    stall.release();
  }
});
