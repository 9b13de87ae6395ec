import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { chunkAttemptsDir } from '../../../activities/chunk/fenceShards';
import { finishStage } from '../../../activities/stage/finishStage';
import { mergeChunks } from '../../../activities/stage/merge';
import { NOTHING_MERGED, type MergeProgress, type MergeResult, type RunPlan } from '../../../contracts/payloads';
import { stripForAggregateMetrics } from '../../../gym/aggregateMetrics';
import { jsonText } from '../../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';
import { collectPlan, materialize, outPrefixOf, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';

// Merging chunk by chunk while later chunks run must give the bytes one merge after the last chunk
// gives, whatever order the pieces came in and however often a piece was retried.

type Row = Record<string, any>;
const response = { output: [{ type: 'message', role: 'assistant', content: 'done' }] };

let dir: string;
let plan: RunPlan;
let chunks: number;
let whole: { rollouts: string; failures: string; digests: string };

const env = () => new MockActivityEnvironment();
const mergeUpTo = (from: MergeProgress, to: number): Promise<MergeProgress> => {
  const input: Parameters<typeof mergeChunks>[0] = { outPrefix: outPrefixOf(plan), from, to };
  return env().run(mergeChunks, input);
};
const finish = async (from?: MergeProgress): Promise<MergeResult> => {
  const input: Parameters<typeof finishStage>[0] = {
    plan,
    stage: 'collect',
    outPrefix: outPrefixOf(plan),
    merged: from,
    allowPartialRollouts: true,
  };
  return ((await env().run(finishStage, input)) as Awaited<ReturnType<typeof finishStage>>).merge;
};
const merged = () => ({
  rollouts: readFileSync(`${outPrefixOf(plan)}.jsonl`, 'utf8'),
  failures: readFileSync(`${outPrefixOf(plan)}_failures.jsonl`, 'utf8'),
  digests: readFileSync(`${outPrefixOf(plan)}_shards/digests.jsonl`, 'utf8'),
});
// Each chunk's shard is its attempt's file (activities/chunk/fenceShards.ts); these runs have one attempt each.
const shardFiles = () =>
  Array.from({ length: chunks }, (_, i) => {
    const attempts = chunkAttemptsDir(outPrefixOf(plan), i);
    return path.join(
      attempts,
      readdirSync(attempts).find((entry) => /^[\d]+-[\d]+-[\d]+-\w+\.jsonl$/.test(entry))!,
    );
  });
/** A partial merged file of the merge attempt that reported `progress`. */
const partial = (progress: MergeProgress, kind: 'rollouts' | 'failures') =>
  `${outPrefixOf(plan)}_shards/merge/${progress.partial}.${kind}.jsonl`;
/** Progress without the token of the attempt that made it: what two attempts of one step agree on. */
const bytesOf = ({ partial: _token, ...progress }: MergeProgress) => progress;

const gym = fakeGymForFile(
  {
    // Every third row fails terminally, so both merged files have lines from every chunk.
    alpha: (row: Row) =>
      row.task_id.endsWith('0')
        ? {
            response,
            reward: 0,
            error_message: 'no',
            _ng_failure_class: 'timeout_exceeded',
            _ng_failure_terminal: true,
          }
        : { response, reward: 1 },
  },
  'pivot-miner-merge-',
);

before(async () => {
  await gym.started();
  dir = gym.freshDir();
  writeJsonl(
    path.join(dir, 'tasks.jsonl'),
    Array.from({ length: 7 }, (_, i) => taskRow(`t${i}${i % 3 === 0 ? '0' : ''}`)),
  );
  plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 2, chunk_size: 4 });
  ({ chunks } = await materialize(plan));
  await runChunks(plan, chunks);
  const result = await finish();
  assert.equal(result.completed, 8);
  assert.equal(result.failedKeys, 6);
  whole = merged();
});

test('chunks merged a few at a time, then the tail, give the bytes of one whole merge', async () => {
  assert.equal(chunks, 4);
  const first = await mergeUpTo(NOTHING_MERGED, 1);
  const second = await mergeUpTo(first, 3);
  assert.equal(second.chunks, 3);
  const result = await finish(second);
  assert.deepEqual(merged(), whole);
  assert.deepEqual([result.completed, result.failedKeys], [8, 6]);
});

test('a retried merge starts over at the size the last good one reported: lines of a failed attempt are not repeated', async () => {
  const first = await mergeUpTo(NOTHING_MERGED, 2);
  // An attempt that wrote part of chunk 2 before its worker died.
  appendFileSync(partial(first, 'rollouts'), '{"_ng_task_index":5,"_ng_rollout_index":0,"torn"');
  const retried = await mergeUpTo(first, 3);
  // A second attempt finds the files the first one took, and rebuilds them from chunk 0.
  assert.deepEqual(bytesOf(await mergeUpTo(first, 3)), bytesOf(retried));
  await finish(retried);
  assert.deepEqual(merged(), whole);
});

test('a partial file shorter than the progress says is rebuilt from chunk 0', async () => {
  const progress = await mergeUpTo(NOTHING_MERGED, 2);
  unlinkSync(partial(progress, 'rollouts'));
  await finish(progress);
  assert.deepEqual(merged(), whole);
  writeFileSync(partial(progress, 'rollouts'), '');
  writeFileSync(partial(progress, 'failures'), '');
  await finish(progress);
  assert.deepEqual(merged(), whole);
});

test('each merged digest is the /aggregate_metrics entry of the rollout on the same line', () => {
  const rollouts = whole.rollouts.trimEnd().split('\n');
  const digests = whole.digests.trimEnd().split('\n');
  assert.equal(digests.length, rollouts.length);
  rollouts.forEach((line, i) =>
    assert.equal(digests[i], jsonText(stripForAggregateMetrics(parseKinded(line).kinded as JsonDict))),
  );
});

test('shards written before there were digests, and inputs without a row index, merge to the same bytes', async () => {
  const saved = shardFiles().map((file) => readFileSync(file, 'utf8'));
  const metaFile = `${outPrefixOf(plan)}_materialized_inputs.meta.json`;
  const meta = readFileSync(metaFile, 'utf8');
  try {
    shardFiles().forEach((file, i) => writeFileSync(file, saved[i]!.replace(/^[^\t\n]*\t/gm, '')));
    assert.doesNotMatch(readFileSync(shardFiles()[0]!, 'utf8'), /\t/);
    const { agentNames: _names, ...older } = JSON.parse(meta) as Row;
    writeFileSync(metaFile, JSON.stringify(older));
    await finish();
    assert.deepEqual(merged(), whole);
  } finally {
    shardFiles().forEach((file, i) => writeFileSync(file, saved[i]!));
    writeFileSync(metaFile, meta);
  }
});
