import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { writeAggregateMetrics } from '../../../activities/stage/aggregateMetrics';
import { ConfigError } from '../../../contracts/errors';
import { computeAggregateMetrics, stripForAggregateMetrics } from '../../../gym/aggregateMetrics';
import { HttpError, listenJson } from '../../../servers/http';
import { readJsonlSync } from '../../helpers/jsonl';
import { collectPlan, materialize, merge, runChunks, fakeGymForFile, taskRow, writeJsonl } from '../fakeGym';
import { GYM_040, aggregate, type Row } from './aggregateMetricsSetup';

// `<stem>_aggregate_metrics.json`: written after the merge from each agent's POST /aggregate_metrics,
// as ng_collect_rollouts writes it, or computed in-process the same way where no agent answers.
// aggregateMetrics.test.ts checks the bytes against NeMo Gym's own code.

const key = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;
/** One entry of the file as NeMo Gym's `_call_aggregate_metrics` builds it from an agent's answer. */
const entry = (name: string, rollouts: Row[]) => ({
  agent_ref: { name },
  ...computeAggregateMetrics(rollouts.map((r) => stripForAggregateMetrics(r))),
});

/**
 * Results echo the request params (which must not be sent on) and report usage (which must), and a
 * truncation, which 0.7.0 sends on and 0.4.0 did not.
 */
const answer = (name: string) => (row: Row) => ({
  responses_create_params: row.responses_create_params,
  response: {
    output: [],
    incomplete_details: { reason: 'max_output_tokens' },
    usage: { input_tokens: row.task_id.length, output_tokens: 2 },
  },
  reward: row.task_id === 'a' ? 1.0 : 0.0,
  served_by: name,
  passed: row.task_id === 'a',
});

const gym = fakeGymForFile({ alpha: answer('alpha'), beta: answer('beta') }, 'pivot-miner-aggregate-');
const { agents, freshDir } = gym;

test('merge writes one entry per agent from its /aggregate_metrics, fed its own rollouts sorted and stripped', async () => {
  const dir = freshDir();
  // The repeated first line continues task 0, so the merged file is not in key order: 0:0, 1:0, 0:1.
  const first = taskRow('a', { agent_ref: { name: 'beta' } });
  writeJsonl(path.join(dir, 'tasks.jsonl'), [first, taskRow('bb', { agent_ref: { name: 'alpha' } }), first]);
  // Without agent_name (NeMo Gym 0.7.0 re-routes every row to it), each row keeps its own agent.
  const plan = collectPlan(dir, { head_url: gym.head.url }, { agent_name: undefined }, GYM_040);
  await runChunks(plan, (await materialize(plan)).chunks);
  const merged = await merge(plan);
  const rollouts = readJsonlSync<Row>(merged.rolloutsPath);
  assert.deepEqual(rollouts.map(key), ['0:0', '1:0', '0:1']);

  assert.equal(agents.beta.aggregateRequests.length, 1);
  assert.equal(agents.alpha.aggregateRequests.length, 1);
  const sent = agents.beta.aggregateRequests[0]!.verify_responses as Row[];
  assert.deepEqual(sent.map(key), ['0:0', '0:1']);
  for (const vr of sent) {
    assert.equal('responses_create_params' in vr, false);
    assert.deepEqual(vr.response, { usage: { input_tokens: 1, output_tokens: 2 } });
    assert.equal(Object.keys(vr).at(-1), 'response');
    assert.deepEqual(vr.agent_ref, { name: 'beta' });
  }
  assert.deepEqual((agents.alpha.aggregateRequests[0]!.verify_responses as Row[]).map(key), ['1:0']);

  const file = path.join(plan.runDir, 'rollouts_aggregate_metrics.json');
  const written = JSON.parse(readFileSync(file, 'utf8')) as Row[];
  const expected = ['beta', 'alpha'].map((name) => {
    const own = rollouts
      .filter((r) => r.agent_ref.name === name)
      .sort((a, b) => a._ng_task_index - b._ng_task_index || a._ng_rollout_index - b._ng_rollout_index);
    return entry(name, own);
  });
  assert.deepEqual(written, JSON.parse(JSON.stringify(expected)));
  assert.deepEqual(
    written.map((e) => e.agent_metrics['mean/reward']),
    [1, 0],
  );
  assert.deepEqual(Object.keys(written[0]!), ['agent_ref', 'agent_metrics', 'key_metrics', 'group_level_metrics']);
});

test('an agent that refuses /aggregate_metrics fails the merge with a non-retryable error naming it', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a')]);
  const runOnly = await listenJson({
    host: '127.0.0.1',
    port: 0,
    handler: (request) => {
      if (request.path === '/run') return { body: { response: { output: [] }, reward: 1 } };
      throw new HttpError(404, 'Not Found');
    },
  });
  try {
    const plan = collectPlan(dir, { agent_url: runOnly.url });
    await runChunks(plan, (await materialize(plan)).chunks);
    await assert.rejects(merge(plan), (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, /agent "alpha" cannot aggregate metrics: .*aggregate_metrics answered 404/);
      return true;
    });
  } finally {
    await runOnly.close();
  }
});

test('local profiling has no agent server, so its metrics are computed in-process the same way', async () => {
  const dir = freshDir();
  const plan = collectPlan(dir, { agent_url: 'http://127.0.0.1:9' }, {}, GYM_040);
  const rolloutsPath = path.join(plan.runDir, 'local_profile.jsonl');
  const rows = [
    {
      _ng_task_index: 1,
      _ng_rollout_index: 0,
      agent_ref: { name: 'pivots' },
      responses_create_params: { input: [] },
      response: { output: [] },
      reward: 1.0,
    },
    {
      _ng_task_index: 0,
      _ng_rollout_index: 1,
      agent_ref: { name: 'pivots' },
      responses_create_params: { input: [] },
      response: { output: [] },
      reward: 0.0,
    },
    {
      _ng_task_index: 0,
      _ng_rollout_index: 0,
      agent_ref: { name: 'pivots' },
      responses_create_params: { input: [] },
      response: { output: [] },
      reward: 1.0,
    },
  ];
  writeJsonl(rolloutsPath, rows);
  const input: Parameters<typeof writeAggregateMetrics>[0] = { plan, stage: 'local_profile', rolloutsPath };
  const out = await aggregate(input);
  assert.equal(out, path.join(plan.runDir, 'local_profile_aggregate_metrics.json'));
  const sorted = [rows[2]!, rows[1]!, rows[0]!];
  assert.deepEqual(JSON.parse(readFileSync(out!, 'utf8')), [entry('pivots', sorted)]);
});

test("local profiling through a NeMo Gym agent asks that agent, under the rows' agent name", async () => {
  const dir = freshDir();
  const plan = collectPlan(
    dir,
    { head_url: gym.head.url },
    {},
    { local_profile: { verifier: 'nemo_gym_agent', agent_name: 'beta' } },
  );
  const rolloutsPath = path.join(plan.runDir, 'local_profile.jsonl');
  const rows = [0, 1].map((rollout) => ({
    _ng_task_index: 0,
    _ng_rollout_index: rollout,
    agent_ref: { name: 'pivots' },
    response: { output: [] },
    reward: rollout,
  }));
  writeJsonl(rolloutsPath, rows);
  const requests = agents.beta.aggregateRequests.length;
  const input: Parameters<typeof writeAggregateMetrics>[0] = { plan, stage: 'local_profile', rolloutsPath };
  const out = await aggregate(input);
  assert.equal(out, path.join(plan.runDir, 'local_profile_aggregate_metrics.json'));
  assert.equal(agents.beta.aggregateRequests.length, requests + 1);
  assert.deepEqual((agents.beta.aggregateRequests.at(-1)!.verify_responses as Row[]).map(key), ['0:0', '0:1']);
  const [entry] = JSON.parse(readFileSync(out, 'utf8')) as Row[];
  assert.deepEqual(entry!.agent_ref, { name: 'pivots' });
  assert.equal(entry!.agent_metrics['mean/reward'], 0.5);
  // 0.7.0's entry (the default): named by the relay 0.7.0 generates for the agent that answered, with
  // the repeat-level metrics it answered (none: this agent answers as 0.4.0's do).
  assert.equal(entry!._ng_environment_server, 'beta_environment_server');
  assert.deepEqual(entry!.repeat_level_metrics, []);
});
