import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  finishStage,
  profileWithAggregateMetrics,
  SEQUENTIAL_TAIL_FROM_ROLLOUTS,
} from '../../../activities/stage/finishStage';
import { mergeChunks } from '../../../activities/stage/merge';
import { claimStageFence } from '../../../activities/chunk/fence';
import { mergedPaths } from '../../../activities/chunk/chunkIndex';
import { chunkAttemptsDir } from '../../../activities/chunk/fenceShards';
import { NOTHING_MERGED, type MergeProgress } from '../../../contracts/payloads';
import { recordSyncs } from '../../helpers/syncSpy';
import { RewardProfileError } from '../../../gym/errors';
import { rewardProfileOutputPaths } from '../../../gym/rewardProfile';
import { collectPlan, materialize, outPrefixOf, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';

// The tail of a collect stage: the merge's rest, the reward profile and the aggregate metrics. Small
// stages overlap the last two; large ones run them one after the other to keep the worker's peak
// memory down. Either way the files are the same.

type Row = Record<string, any>;

const gym = fakeGymForFile(
  {
    alpha: (row) => ({
      response: { output: [], usage: { input_tokens: 3, output_tokens: 2 } },
      reward: row.task_id === 'a' ? 1 : 0,
    }),
  },
  'pivot-miner-finish-stage-',
);

function stagePlan(tasks: Row[]) {
  const dir = gym.freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), tasks);
  return collectPlan(dir, { head_url: gym.head.url }, { num_repeats: 2 });
}

/** An activity in a mock activity context, its result typed as the function's. */
const runActivity = <I, O>(fn: (input: I) => Promise<O>, input: I) =>
  new MockActivityEnvironment().run(fn, input) as Promise<O>;

test('the tail of a large stage writes the same files as the overlapped tail of a small one', async () => {
  const plan = stagePlan([taskRow('a'), taskRow('bb'), taskRow('ccc')]);
  const outPrefix = outPrefixOf(plan);
  await runChunks(plan, (await materialize(plan)).chunks);
  const { rewardProfilingPath, agentMetricsPath } = rewardProfileOutputPaths(`${outPrefix}.jsonl`);
  const outputs = () =>
    [rewardProfilingPath, agentMetricsPath, `${outPrefix}_aggregate_metrics.json`].map((f) => readFileSync(f, 'utf8'));

  const small = await runActivity(finishStage, {
    plan,
    stage: 'collect' as const,
    outPrefix,
    allowPartialRollouts: false,
  });
  assert.equal(small.merge.completed, 6);
  const overlapped = outputs();

  for (const f of [rewardProfilingPath, agentMetricsPath]) rmSync(f);
  const tail = {
    plan,
    stage: 'collect' as const,
    outPrefix,
    rolloutsPath: small.merge.rolloutsPath,
    completed: SEQUENTIAL_TAIL_FROM_ROLLOUTS,
    allowPartialRollouts: false,
    fence: await claimStageFence(outPrefix),
  };
  const large = await runActivity(profileWithAggregateMetrics, tail);
  assert.deepEqual(large, small.profile);
  assert.deepEqual(outputs(), overlapped);
  assert.equal(large.tasks, 3);
});

test('a large stage is aggregated only after its reward profile: a profile that fails strict mode asks no agent', async () => {
  const plan = stagePlan([taskRow('a'), taskRow('bb'), taskRow('ccc')]);
  const outPrefix = outPrefixOf(plan);
  await materialize(plan);
  // Only the first of the two chunks runs, so two rollouts are missing.
  await runChunks(plan, 1);
  const { merge } = await runActivity(finishStage, {
    plan,
    stage: 'collect' as const,
    outPrefix,
    allowPartialRollouts: true,
  });
  const asked = gym.agents.alpha.aggregateRequests.length;
  const tail = {
    plan,
    stage: 'collect' as const,
    outPrefix,
    rolloutsPath: merge.rolloutsPath,
    completed: SEQUENTIAL_TAIL_FROM_ROLLOUTS,
    allowPartialRollouts: false,
    fence: await claimStageFence(outPrefix),
  };
  await assert.rejects(runActivity(profileWithAggregateMetrics, tail), RewardProfileError);
  // Long enough for an overlapped aggregate's request to arrive: it would be sent within milliseconds.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(gym.agents.alpha.aggregateRequests.length, asked);
});

test('a finish whose profile refuses missing rollouts still publishes the merged files, and leaves no files of its own', async () => {
  const plan = stagePlan([taskRow('a'), taskRow('bb'), taskRow('ccc')]);
  const outPrefix = outPrefixOf(plan);
  await materialize(plan);
  await runChunks(plan, 1);
  await assert.rejects(
    runActivity(finishStage, { plan, stage: 'collect' as const, outPrefix, allowPartialRollouts: false }),
    RewardProfileError,
  );
  assert.equal(readFileSync(`${outPrefix}.jsonl`, 'utf8').trimEnd().split('\n').length, 4);
  // Only the attempt's claim and sequence number stay in the stage's fence directory: its partial
  // files were published, its view removed.
  const left = readdirSync(`${outPrefix}_shards/merge`).sort();
  assert.equal(left.length, 2, left.join(' '));
  assert.match(left[0]!, /^1-\d+-1-\w+\.claim$/);
  assert.equal(left[1], '1.seq');
  assert.equal(existsSync(rewardProfileOutputPaths(`${outPrefix}.jsonl`).rewardProfilingPath), false);
});

test('every file a step of the stage reports done is synced, with its directory, before the step returns', async () => {
  const plan = stagePlan([taskRow('a'), taskRow('bb'), taskRow('ccc')]);
  const outPrefix = outPrefixOf(plan);
  const files = (dir: string) => readdirSync(dir).map((entry) => path.join(dir, entry));
  const unsynced = async (step: () => Promise<unknown>, reported: () => string[]): Promise<string[]> =>
    (await recordSyncs(step)).record.missing(reported());

  assert.deepEqual(
    await unsynced(
      () => materialize(plan),
      () => files(plan.runDir).filter((f) => f.includes('_materialized_inputs')),
    ),
    [],
  );
  const chunkFiles = () => files(chunkAttemptsDir(outPrefix, 0)).filter((f) => f.endsWith('.jsonl'));
  assert.deepEqual(await unsynced(() => runChunks(plan, 1), chunkFiles), []);
  assert.ok((await recordSyncs(() => runChunks(plan, 1))).record.synced(`${outPrefix}_shards`));
  await runChunks(plan, 2);
  let progress: MergeProgress = NOTHING_MERGED;
  const merged = () => files(`${outPrefix}_shards/merge`).filter((f) => f.endsWith('.jsonl'));
  const mergeStep = async () => {
    progress = await runActivity(mergeChunks, { outPrefix, from: NOTHING_MERGED, to: 1 });
  };
  assert.deepEqual(await unsynced(mergeStep, merged), []);
  const published = () => [
    ...Object.values(mergedPaths(outPrefix)),
    ...Object.values(rewardProfileOutputPaths(`${outPrefix}.jsonl`)),
    `${outPrefix}_aggregate_metrics.json`,
    ...['_quality_summary.json', '_rollout_verdicts.jsonl', '_health.json'].map((suffix) => `${outPrefix}${suffix}`),
  ];
  const finish = () =>
    runActivity(finishStage, {
      plan,
      stage: 'collect' as const,
      outPrefix,
      merged: progress,
      allowPartialRollouts: false,
    });
  assert.deepEqual(await unsynced(finish, published), []);
});
