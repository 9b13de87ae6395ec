import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ensureNemoGym } from '../../../scripts/lib/nemoGym';
import { collectPlan, materialize, merge, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';

// Which rows a retried chunk attempt runs, and in what order: with dispatch_longest_first, those whose
// older failed attempts reported elapsed_seconds start first, longest first, as in NeMo Gym 0.7.0's
// resume (its `_load_from_cache`, run on the same rows and sidecar); the files come out the same
// either way. Gating by older lines is chunkFailures.test.ts.

type Row = Record<string, unknown>;
const response = { output: [{ type: 'message', role: 'assistant', content: 'done' }] };

const gym = fakeGymForFile({ alpha: () => ({ response, reward: 1.0 }) }, 'pivot-miner-chunk-rows-');

const failed = (task: number, fields: Row) => ({
  _ng_task_index: task,
  _ng_rollout_index: 0,
  _ng_failure_class: 'transient',
  ...fields,
});

// As left by an earlier attempt of the chunk: task 0 out of attempts however long it ran, tasks 3 and
// 4 tied at 30 s (one in its response's metadata, one over two attempts), task 1 at 5 s, task 5 with
// a time Python cannot read, task 2 never failed.
const OLDER = [
  ...[1, 2, 3].map((attempt) => failed(0, { elapsed_seconds: 99, attempt })),
  failed(1, { elapsed_seconds: 5 }),
  failed(4, { elapsed_seconds: 12 }),
  failed(3, { response: { metadata: { elapsed_seconds: '30' } } }),
  failed(5, { elapsed_seconds: 'a while' }),
  failed(4, { elapsed_seconds: 30.0 }),
];

/** A retried chunk of six tasks over OLDER; resolves to the task ids in the order they were posted, and its files. */
async function resumedChunk(name: string, collect: Row) {
  const base = path.join(gym.freshDir(), name);
  mkdirSync(base);
  writeJsonl(
    path.join(base, 'tasks.jsonl'),
    [0, 1, 2, 3, 4, 5].map((i) => taskRow(`t${i}`)),
  );
  const plan = collectPlan(
    base,
    { head_url: gym.head.url },
    { max_attempts: 3, max_concurrency: 1, chunk_size: 8, ...collect },
  );
  const { chunks } = await materialize(plan);
  assert.equal(chunks, 1);
  mkdirSync(path.join(plan.runDir, 'rollouts_shards'));
  writeJsonl(path.join(plan.runDir, 'rollouts_shards/000000_failures.jsonl'), OLDER);
  const before = gym.agents.alpha.runs.length;
  const [result] = await runChunks(plan, chunks);
  const posted = gym.agents.alpha.runs.slice(before).map((r) => String(r.task_id));
  assert.equal(result!.alreadyDone, 1, 'task 0 is out of attempts');
  await merge(plan);
  const file = (suffix: string) => readFileSync(path.join(plan.runDir, `rollouts${suffix}`), 'utf8');
  const materialized = path.join(plan.runDir, 'rollouts_materialized_inputs.jsonl');
  return { posted, materialized, files: ['.jsonl', '_failures.jsonl', '_aggregate_metrics.json'].map(file) };
}

/** The task ids of the rows 0.7.0's resume runs, in order, on `materialized` with OLDER as its sidecar and no rollouts. */
function resumedBy070(materialized: string, longestFirst: boolean): string[] {
  const cache = path.join(gym.freshDir(), `cache-${String(longestFirst)}`);
  mkdirSync(cache);
  copyFileSync(materialized, path.join(cache, 'rollouts_materialized_inputs.jsonl'));
  writeFileSync(path.join(cache, 'rollouts.jsonl'), '');
  writeJsonl(path.join(cache, 'rollouts_failures.jsonl'), OLDER);
  const script = [
    'import sys, json',
    'from nemo_gym.rollout_collection import RolloutCollectionConfig, RolloutCollectionHelper',
    'config = RolloutCollectionConfig.model_construct(output_jsonl_fpath=sys.argv[1], dispatch_longest_first=sys.argv[2] == "1",',
    '    retry_invalid_judge_responses=False, retry_terminal_timeouts=False)',
    'rows = RolloutCollectionHelper.model_construct()._load_from_cache(config)[0]',
    'print("ORDER", json.dumps([row["task_id"] for row in rows]))',
  ].join('\n');
  const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
  const args = ['-c', script, path.join(cache, 'rollouts.jsonl'), longestFirst ? '1' : '0'];
  const env = { ...process.env, NEMO_GYM_MAX_ROLLOUT_ATTEMPTS: '3' };
  const printed = execFileSync(python, args, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(/^ORDER (.*)$/m.exec(printed)![1]!) as string[];
}

test(
  'dispatch_longest_first: a retried chunk starts the rows that ran longest first, and writes the same files',
  { timeout: 300_000 },
  async () => {
    const inOrder = await resumedChunk('off', {});
    assert.deepEqual(inOrder.posted, ['t1', 't2', 't3', 't4', 't5']);
    const longest = await resumedChunk('on', { dispatch_longest_first: true });
    assert.deepEqual(longest.posted, ['t3', 't4', 't1', 't2', 't5']);
    assert.deepEqual(longest.files, inOrder.files);
    assert.deepEqual(
      inOrder.posted,
      resumedBy070(inOrder.materialized, false),
      "0.7.0's resume order without the option",
    );
    assert.deepEqual(longest.posted, resumedBy070(longest.materialized, true), "0.7.0's resume order with it");
    const tasks = longest.files[0]!.trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as Row)._ng_task_index);
    assert.deepEqual(tasks, [1, 2, 3, 4, 5], 'rollouts in materialized order');
  },
);
