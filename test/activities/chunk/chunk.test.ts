import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { chunkShard } from '../../../activities/chunk/fenceShards';
import { parseShardLine } from '../../../activities/chunk/shardLines';
import { readJsonlSync } from '../../helpers/jsonl';
import {
  collectPlan,
  materialize,
  merge,
  outPrefixOf,
  runChunks,
  runChunksSideBySide,
  fakeGymForFile,
  startFakeAgent,
  taskRow,
  writeJsonl,
} from '../fakeGym';

// runChunk against NeMo Gym-shaped agents: every row goes to the agent its agent_ref names, results
// are keyed as ng_collect_rollouts keys them, and a chunk's rows run once each and merge in key
// order however they were served. What becomes of failed rows is chunkFailures.test.ts.

type Row = Record<string, any>;
const key = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
const response = { output: [{ type: 'message', role: 'assistant', content: 'done' }], usage: { input_tokens: 3 } };

/** An agent that runs every row, saying which agent served it. */
function serving(agentName: string) {
  return (): Row => ({ response, reward: 1.0, served_by: agentName });
}

const gym = fakeGymForFile({ alpha: serving('alpha'), beta: serving('beta') }, 'pivot-miner-chunk-');
const { agents, freshDir } = gym;

test('each row goes to the agent its agent_ref names; results carry agent_ref after the rollout key', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [
    taskRow('a', { agent_ref: { type: 'responses_api_agents', name: 'beta' } }),
    taskRow('b', { task_source: 'bs' }),
    taskRow('c', { agent_ref: { name: 'beta' } }),
  ]);
  // Without agent_name (NeMo Gym 0.7.0 re-routes every row to it), rows keep their agent_ref; b is mapped.
  const routing = { agent_name: undefined, agent_map: { bs: 'alpha' } };
  const plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 2, chunk_size: 4, ...routing });
  const alphaRuns = agents.alpha.runs.length;
  const betaRuns = agents.beta.runs.length;
  const { chunks } = await materialize(plan);
  await runChunks(plan, chunks);
  await merge(plan);
  assert.equal(agents.alpha.runs.length - alphaRuns, 2);
  assert.equal(agents.beta.runs.length - betaRuns, 4);

  const rollouts = readJsonlSync<Row>(`${outPrefixOf(plan)}.jsonl`);
  assert.deepEqual(
    rollouts.map((r) => `${r.agent_ref.name}<-${r.served_by}`),
    ['beta<-beta', 'beta<-beta', 'alpha<-alpha', 'alpha<-alpha', 'beta<-beta', 'beta<-beta'],
  );
  // The agent echoed none of the keys, so they are appended in NeMo Gym's order, agent_ref last.
  for (const r of rollouts)
    assert.deepEqual(Object.keys(r).slice(-3), ['_ng_task_index', '_ng_rollout_index', 'agent_ref']);
  assert.deepEqual(rollouts[0]!.agent_ref, { type: 'responses_api_agents', name: 'beta' });
});

test('a result that echoes the keys keeps their places and gets the row values, as a Python dict assignment does', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a')]);
  const echoing = await startFakeAgent('alpha', () => ({
    agent_ref: { name: 'someone else' },
    _ng_task_index: 99,
    response,
    reward: 1,
  }));
  try {
    const plan = collectPlan(dir, { agent_url: echoing.server.url });
    await runChunks(plan, (await materialize(plan)).chunks);
    const [text] = readFileSync((await chunkShard(outPrefixOf(plan), 0)).rollouts, 'utf8')
      .trim()
      .split('\n');
    const result = JSON.parse(parseShardLine({ text: text! }).line) as Row;
    assert.deepEqual(Object.keys(result), ['agent_ref', '_ng_task_index', 'response', 'reward', '_ng_rollout_index']);
    assert.deepEqual(result.agent_ref, { name: 'alpha' });
    assert.equal(result._ng_task_index, 0);
  } finally {
    await echoing.server.close();
  }
});

test('a chunk longer than its window of rows in memory runs every row once, in any order, and merges them in order', async () => {
  const dir = freshDir();
  writeJsonl(
    path.join(dir, 'tasks.jsonl'),
    ['w1', 'w2', 'w3', 'w4', 'w5'].map((id) => taskRow(id)),
  );
  // max_concurrency 1 holds two rows in memory, so this 15-row chunk waits for a free slot 13 times.
  const plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 3, chunk_size: 15, max_concurrency: 1 });
  const alphaRuns = agents.alpha.runs.length;
  const { chunks } = await materialize(plan);
  assert.equal(chunks, 1);
  const [result] = await runChunks(plan, chunks);
  assert.deepEqual(result, { chunkIndex: 0, completed: 15, failed: 0, alreadyDone: 0, reused: 0 });
  assert.equal(agents.alpha.runs.length - alphaRuns, 15);
  await merge(plan);
  const rollouts = readJsonlSync<Row>(`${outPrefixOf(plan)}.jsonl`);
  assert.deepEqual(
    rollouts.map(key),
    Array.from({ length: 15 }, (_, i) => `${Math.floor(i / 3)}:${i % 3}`),
  );
});

test('chunks in flight side by side are served oldest first, so they finish one after another', async () => {
  const dir = freshDir();
  const ids = Array.from({ length: 6 }, (_, i) => `oldest-first-${i}`);
  writeJsonl(
    path.join(dir, 'tasks.jsonl'),
    ids.map((id) => taskRow(id)),
  );
  // The first answer takes long enough for every chunk to queue a request behind it, so the order
  // after it is the limiter's, not how fast each chunk got through its setup.
  let answered = 0;
  const held = await startFakeAgent('alpha', async () => {
    if (answered++ === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    return { response, reward: 1.0 };
  });
  try {
    // Three chunks of six rows sharing one request slot: served in arrival order, they would take turns.
    const plan = collectPlan(
      dir,
      { agent_url: held.server.url },
      { num_repeats: 3, chunk_size: 6, max_concurrency: 1 },
    );
    const { chunks } = await materialize(plan);
    assert.equal(chunks, 3);
    const results = await runChunksSideBySide(plan, chunks);
    assert.deepEqual(
      results.map((r) => r.completed),
      [6, 6, 6],
    );
    const chunkOfRun = held.runs.map((row) => Math.floor((row._ng_task_index * 3 + row._ng_rollout_index) / 6));
    assert.equal(chunkOfRun.length, 18);
    // Whichever chunk reaches the free slot first takes it; from then on the slot goes by age.
    assert.deepEqual(
      chunkOfRun.slice(1),
      [...chunkOfRun.slice(1)].sort((a, b) => a - b),
    );
  } finally {
    await held.server.close();
  }
});
