import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { convertToCandidates, type ConvertOptions } from '../../../gym/convert';
import { readJsonl, rollout, say, tempDir, writeJsonl } from './helpers';

function keyed(task: number, rolloutIndex: number, reward: number, text: string) {
  return rollout([say(text)], { _ng_task_index: task, _ng_rollout_index: rolloutIndex, reward });
}

async function run(rows: unknown[], options: Partial<ConvertOptions> = {}, profile?: unknown[]) {
  const dir = tempDir();
  const file = writeJsonl(path.join(dir, 'rollouts.jsonl'), rows);
  const rewardProfilePath = profile
    ? writeJsonl(path.join(dir, 'rollouts_reward_profiling.jsonl'), profile)
    : undefined;
  const summary = await convertToCandidates({
    inputs: [file],
    outDir: path.join(dir, 'out'),
    agent_name: 'agent',
    rewardProfilePath,
    ...options,
  });
  return { counts: summary.counts, candidates: readJsonl(summary.candidatesPath) };
}

// Task 0 passed every time; task 1 passed once and failed once (mixed).
const rows = [keyed(0, 0, 1, 'a'), keyed(0, 1, 1, 'b'), keyed(1, 0, 0, 'c'), keyed(1, 1, 1, 'd')];
const texts = (candidates: Record<string, any>[]) => candidates.map((c) => c.expected_action.content);

test('prefer_mixed ranks tasks whose rollout group has mixed rewards first', async () => {
  const { candidates, counts } = await run(rows);
  assert.deepEqual(texts(candidates), ['d', 'a', 'b']);
  assert.equal(counts.positive_trajectories, 3);
  assert.deepEqual(
    candidates.map((c) => [c.provenance.task_index, c.provenance.rollout_index, c.provenance.source_reward]),
    [
      [1, 1, 1],
      [0, 0, 1],
      [0, 1, 1],
    ],
  );
});

test('require_mixed keeps only mixed tasks; off keeps input order', async () => {
  const required = await run(rows, { source_preference: 'require_mixed' });
  assert.deepEqual(texts(required.candidates), ['d']);
  assert.equal(required.counts.not_selected_trajectories, 2);
  const off = await run(rows, { source_preference: 'off' });
  assert.deepEqual(texts(off.candidates), ['a', 'b', 'd']);
});

test('a reward profile decides which tasks are mixed', async () => {
  const profile = [
    { _ng_task_index: 0, 'mean/reward': 0.5, 'min/reward': 0.0, 'max/reward': 1.0 },
    { _ng_task_index: 1, 'mean/reward': 1.0, 'min/reward': 1.0, 'max/reward': 1.0 },
  ];
  const { candidates } = await run(rows, {}, profile);
  assert.deepEqual(texts(candidates), ['a', 'b', 'd']);
  const required = await run(rows, { source_preference: 'require_mixed' }, profile);
  assert.deepEqual(texts(required.candidates), ['a', 'b']);
  await assert.rejects(
    run(rows, {}, [{ 'mean/reward': 1 }]),
    /rollouts_reward_profiling\.jsonl:1: not a reward profile row: _ng_task_index/,
  );
});

test('the minimum source reward is configurable', async () => {
  const partial = [keyed(0, 0, 0.5, 'half'), keyed(1, 0, 1, 'full')];
  assert.deepEqual(texts((await run(partial)).candidates), ['full']);
  assert.deepEqual(texts((await run(partial, { min_source_reward: 0.5 })).candidates), ['half', 'full']);
});

test('identical pivots are kept once, with the provenance of the first', async () => {
  const { candidates, counts } = await run([keyed(0, 0, 1, 'same'), keyed(0, 1, 1, 'same'), keyed(0, 2, 1, 'other')], {
    source_preference: 'off',
  });
  assert.equal(counts.deduped, 1);
  assert.deepEqual(
    candidates.map((c) => [c.expected_action.content, c.provenance.rollout_index]),
    [
      ['same', 0],
      ['other', 2],
    ],
  );
});

test('rows without keys get task indices in line order and rollout indices within the task', async () => {
  const { candidates } = await run(
    [rollout([say('x')]), rollout([say('y')], { task_idx: 0 }), rollout([say('z')], { task_idx: 0 })],
    { source_preference: 'off' },
  );
  assert.deepEqual(
    candidates.map((c) => [c.provenance.task_index, c.provenance.rollout_index]),
    [
      [0, 0],
      [0, 1],
      [0, 2],
    ],
  );
});

test('options are checked against the schema', async () => {
  await assert.rejects(
    run(rows, { source_preference: 'sometimes' as never }),
    /invalid convert options: source_preference/,
  );
  await assert.rejects(run(rows, { source_format: 'tool_messages' }), /field_mapping/);
  await assert.rejects(run(rows, { agent_name: '' }), /agent_name/);
});
