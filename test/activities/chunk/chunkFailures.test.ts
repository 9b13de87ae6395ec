import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { readJsonlSync } from '../../helpers/jsonl';
import { collectPlan, materialize, merge, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';

// runChunk's failed rows: failures an agent reports in a 200 answer are routed as NeMo Gym routes
// them (sidecar, nowhere, never retried) instead of becoming rollouts, and a retried chunk reads its
// sidecar to skip the keys that failed for good. Routing and keying of rollouts is chunk.test.ts.

type Row = Record<string, any>;
const key = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
const response = { output: [{ type: 'message', role: 'assistant', content: 'done' }], usage: { input_tokens: 3 } };

/** What the scripted agent answers, chosen by the row's task_id. */
function scripted(row: Row, attempt: number): Row {
  const failed = (extra: Row) => ({
    task_id: row.task_id,
    response,
    reward: 0.0,
    error_message: `${row.task_id} failed`,
    ...extra,
  });
  switch (row.task_id) {
    case 'flaky':
      return attempt === 1 ? failed({ _ng_failure_class: 'transient' }) : { response, reward: 1.0, served_by: 'alpha' };
    case 'terminal':
      return failed({ _ng_failure_class: 'timeout_exceeded', _ng_failure_terminal: true });
    case 'killed':
      return failed({ _ng_failure_class: 'kill_shaped', _ng_no_persist: true });
    case 'judged':
      return attempt === 1
        ? { response, reward: 0.0, invalid_judge_response: true }
        : { response, reward: 1.0, invalid_judge_response: false };
    default:
      return { response, reward: 1.0, served_by: 'alpha' };
  }
}

const gym = fakeGymForFile({ alpha: scripted }, 'pivot-miner-chunk-failures-');
const { agents, freshDir } = gym;

test('agent-reported failures go to the sidecar or nowhere, never to rollouts; terminal ones are never retried', async () => {
  const dir = freshDir();
  writeJsonl(
    path.join(dir, 'tasks.jsonl'),
    ['ok', 'flaky', 'terminal', 'killed'].map((id) => taskRow(id)),
  );
  const plan = collectPlan(dir, { head_url: gym.head.url }, { max_attempts: 3, chunk_size: 8 });
  const runsBefore = agents.alpha.runs.length;
  const callsFor = (taskId: string) => agents.alpha.runs.slice(runsBefore).filter((r) => r.task_id === taskId).length;
  const { chunks } = await materialize(plan);
  const [first] = await runChunks(plan, chunks);
  assert.deepEqual({ completed: first!.completed, failed: first!.failed }, { completed: 2, failed: 2 });
  assert.deepEqual(['ok', 'flaky', 'terminal', 'killed'].map(callsFor), [1, 2, 1, 3]);

  // Resuming the chunk (a retried activity) skips the terminal key and runs the unpersisted one
  // again, as NeMo Gym's resume (`_load_from_cache`) does.
  const [resumed] = await runChunks(plan, chunks);
  assert.deepEqual(['ok', 'flaky', 'terminal', 'killed'].map(callsFor), [1, 2, 1, 6]);
  assert.deepEqual(
    { completed: resumed!.completed, failed: resumed!.failed, alreadyDone: resumed!.alreadyDone },
    { completed: 0, failed: 1, alreadyDone: 3 },
  );

  const merged = await merge(plan);
  const rollouts = readJsonlSync<Row>(merged.rolloutsPath);
  assert.deepEqual(rollouts.map(key), ['0:0', '1:0']);
  assert.ok(rollouts.every((r) => r.reward === 1));
  const failures = readJsonlSync<Row>(merged.failuresPath);
  assert.deepEqual(
    failures.map((f) => `${f.task_id}#${f.attempt} ${f.failure_class} ${f._ng_failure_class}`),
    ['flaky#1 agent_reported transient', 'terminal#1 agent_reported timeout_exceeded'],
  );
  // The sidecar line is the keyed result as NeMo Gym writes it, with the attempt bookkeeping after.
  const terminal = failures[1]!;
  assert.equal(terminal._ng_failure_terminal, true);
  assert.deepEqual(terminal.agent_ref, { name: 'alpha' });
  assert.deepEqual(Object.keys(terminal).slice(-6), [
    '_ng_task_index',
    '_ng_rollout_index',
    'agent_ref',
    'attempt',
    'failure_class',
    'error',
  ]);
  assert.match(terminal.error, /_ng_failure_class=timeout_exceeded\): terminal failed/);
  // Only the terminal key is a recorded failure: the unpersisted one left no line anywhere.
  assert.equal(merged.failedKeys, 1);
});

test('a terminal line already in the sidecar stops a retried chunk from running that key', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('ok')]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { max_attempts: 3 });
  const { chunks } = await materialize(plan);
  // As left by an earlier attempt of this chunk that died after writing its failure line.
  mkdirSync(path.join(plan.runDir, 'rollouts_shards'));
  writeFileSync(
    path.join(plan.runDir, 'rollouts_shards/000000_failures.jsonl'),
    `${JSON.stringify({ _ng_task_index: 0, _ng_rollout_index: 0, _ng_failure_class: 'skipped', _ng_failure_terminal: true, attempt: 1 })}\n`,
    { flag: 'wx' },
  );
  const runsBefore = agents.alpha.runs.length;
  const [result] = await runChunks(plan, chunks);
  assert.equal(agents.alpha.runs.length, runsBefore);
  assert.equal(result!.alreadyDone, 1);
  assert.equal(key(readJsonlSync<Row>(path.join(plan.runDir, 'rollouts_shards/000000_failures.jsonl'))[0]!), '0:0');
});

test('retry_terminal_timeouts: a retried chunk runs a key whose older line is a terminal timeout, not a skipped one', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('terminal'), taskRow('ok')]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { max_attempts: 2, retry_terminal_timeouts: true });
  const { chunks } = await materialize(plan);
  // As left by an earlier attempt of this chunk: task 0's stamped timeout, task 1's unstamped skip.
  mkdirSync(path.join(plan.runDir, 'rollouts_shards'));
  const older = [
    { _ng_task_index: 0, _ng_rollout_index: 0, _ng_failure_class: 'timeout_exceeded', _ng_failure_terminal: true },
    { _ng_task_index: 1, _ng_rollout_index: 0, _ng_failure_class: 'skipped' },
  ];
  writeJsonl(path.join(plan.runDir, 'rollouts_shards/000000_failures.jsonl'), older);
  const calls = () => agents.alpha.runs.filter((r) => r.task_id === 'terminal').length;
  const callsBefore = calls();
  const [result] = await runChunks(plan, chunks);
  // The skip is terminal with the option; the timeout has its second and last attempt.
  assert.equal(result!.alreadyDone, 1);
  assert.equal(calls() - callsBefore, 1);
  await merge(plan);
  const failures = readJsonlSync<Row>(path.join(plan.runDir, 'rollouts_failures.jsonl'));
  assert.deepEqual(failures.map((f) => `${key(f)} ${f._ng_failure_class} ${f.attempt ?? '-'}`).sort(), [
    '0:0 timeout_exceeded -',
    '0:0 timeout_exceeded 2',
    '1:0 skipped -',
  ]);
});

test('retry_invalid_judge_responses: an invalid judge response is a failed attempt, then judged again', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('judged')]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { max_attempts: 2, retry_invalid_judge_responses: true });
  const [result] = await runChunks(plan, (await materialize(plan)).chunks);
  assert.equal(result!.completed, 1);
  await merge(plan);
  const [failure, ...more] = readJsonlSync<Row>(path.join(plan.runDir, 'rollouts_failures.jsonl'));
  assert.equal(more.length, 0);
  assert.deepEqual(Object.keys(failure!).slice(-6), [
    'agent_ref',
    '_ng_failure_class',
    '_ng_migrated_invalid_judge_response',
    'attempt',
    'failure_class',
    'error',
  ]);
  assert.equal(failure!._ng_failure_class, 'judge_invalid');
  assert.equal(failure!.failure_class, 'judge_invalid');
  const [rollout] = readJsonlSync<Row>(path.join(plan.runDir, 'rollouts.jsonl'));
  assert.equal(rollout!.reward, 1.0);
});

test("a retried chunk's retry of a key whose older line flags its deliverable posts the row flagged", async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('reused'), taskRow('rerun')]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { max_attempts: 2 });
  const { chunks } = await materialize(plan);
  // As left by an earlier attempt of this chunk: two invalid judge responses, one with a deliverable.
  mkdirSync(path.join(plan.runDir, 'rollouts_shards'));
  const older = [
    { _ng_task_index: 0, _ng_rollout_index: 0, _ng_failure_class: 'judge_invalid', reuse_cached_deliverable: true },
    { _ng_task_index: 1, _ng_rollout_index: 0, _ng_failure_class: 'judge_invalid', reuse_cached_deliverable: false },
  ];
  writeJsonl(path.join(plan.runDir, 'rollouts_shards/000000_failures.jsonl'), older);
  const runsBefore = agents.alpha.runs.length;
  const [result] = await runChunks(plan, chunks);
  assert.equal(result!.completed, 2);
  const posted = agents.alpha.runs.slice(runsBefore).map((r) => `${r.task_id} ${String(r.reuse_cached_deliverable)}`);
  assert.deepEqual(posted.sort(), ['rerun undefined', 'reused true']);
  await merge(plan);
  const rollouts = readJsonlSync<Row>(path.join(plan.runDir, 'rollouts.jsonl'));
  assert.deepEqual(rollouts.map(key), ['0:0', '1:0']);
});
