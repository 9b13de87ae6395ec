import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { writeAggregateMetrics } from '../../../activities/stage/aggregateMetrics';
import { claimStageFence } from '../../../activities/chunk/fence';
import { mergedPaths } from '../../../activities/chunk/chunkIndex';
import { ConfigError } from '../../../contracts/errors';
import { computeAggregateMetrics, rolloutDigest, stripForAggregateMetrics } from '../../../gym/aggregateMetrics';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';
import { startEmbeddedStack } from '../../../servers/embeddedStack';
import { HttpError, listenJson } from '../../../servers/http';
import { readJsonlSync } from '../../helpers/jsonl';
import { runNemoGymPython } from '../../helpers/nemoGymPython';
import {
  collectPlan,
  materialize,
  merge,
  outPrefixOf,
  runChunks,
  fakeGymForFile,
  taskRow,
  writeJsonl,
} from '../fakeGym';

/** The aggregate metrics as the finish writes them: an activity publishing through the stage's fence. */
const aggregate = (input: Parameters<typeof writeAggregateMetrics>[0]) =>
  new MockActivityEnvironment().run(
    async (i: typeof input) => writeAggregateMetrics(i, await claimStageFence(i.rolloutsPath.replace(/\.jsonl$/, ''))),
    input,
  ) as Promise<string | undefined>;

// `<stem>_aggregate_metrics.json`: written after the merge from each agent's POST /aggregate_metrics,
// as ng_collect_rollouts writes it, and equal to what NeMo Gym's own `ng_aggregate_rollouts` writes
// from the same rollouts file. These tests hold the pipeline to 0.4.0 (`profile.nemo_gym_version`),
// whose venv they run; test/nemoGym/evalAggregateBytes.test.ts checks 0.7.0's file, the default.

/** The profile key that keeps a stage's files 0.4.0's. */
const GYM_040 = { profile: { nemo_gym_version: '0.4.0' } };

type Row = Record<string, any>;
const repoRoot = path.resolve(__dirname, '../../..');
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

test(
  "in-process metrics are written with the bytes NeMo Gym writes from its agent's answer",
  { timeout: 180_000 },
  async () => {
    const dir = freshDir();
    const plan = collectPlan(dir, { agent_url: 'http://127.0.0.1:9' }, {}, GYM_040);
    const rolloutsPath = path.join(plan.runDir, 'local_profile.jsonl');
    // Python's types decide the bytes: float rewards that look integral, int and float usage, a bool,
    // a column one rollout lacks (pandas then makes every max/min a float) and an orjson exponent.
    const line = (task: number, rollout: number, reward: string, extra: string, usage: string) =>
      `{"_ng_task_index":${task},"_ng_rollout_index":${rollout},"agent_ref":{"name":"pivots"},"responses_create_params":{"input":[]},` +
      `"response":{"output":[],"usage":{${usage}}},"reward":${reward}${extra}}`;
    const lines = [
      line(0, 0, '1.0', ',"passed":true', '"input_tokens":5,"output_tokens":7'),
      line(0, 1, '0.0', ',"passed":false,"score":0.5', '"input_tokens":6,"output_tokens":7'),
      line(1, 0, '1.0', ',"passed":true', '"input_tokens":6,"output_tokens":1e-6'),
    ];
    writeFileSync(rolloutsPath, `${[lines[2], lines[0], lines[1]].join('\n')}\n`);
    const input: Parameters<typeof writeAggregateMetrics>[0] = { plan, stage: 'local_profile', rolloutsPath };
    const out = await aggregate(input);
    // NeMo Gym's side: the stripped results sent as JSON, its agent's answer as JSON, and the file as
    // `_call_aggregate_metrics` writes it.
    const script = [
      'import json, sys, orjson',
      'from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest',
      'from nemo_gym.reward_profile import compute_aggregate_metrics',
      'results = [orjson.loads(l) for l in sys.stdin.read().splitlines()]',
      'stripped = []',
      'for r in results:',
      '    entry = {k: v for k, v in r.items() if k not in ("response", "responses_create_params")}',
      '    usage = (r.get("response") or {}).get("usage")',
      '    if usage: entry["response"] = {"usage": usage}',
      '    stripped.append(entry)',
      'request = json.loads(AggregateMetricsRequest(verify_responses=stripped).model_dump_json())',
      'answer = AggregateMetrics.model_validate(json.loads(compute_aggregate_metrics(request["verify_responses"]).model_dump_json()))',
      'entry = {"agent_ref": {"name": "pivots"}, "agent_metrics": answer.agent_metrics, "key_metrics": answer.key_metrics, "group_level_metrics": answer.group_level_metrics}',
      'sys.stdout.buffer.write(orjson.dumps([entry], option=orjson.OPT_INDENT_2))',
    ].join('\n');
    const theirs = await runNemoGymPython(script, lines.join('\n'));
    assert.match(theirs, /"mean\/reward": 0\.6666666666666666,/);
    assert.equal(out, path.join(plan.runDir, 'local_profile_aggregate_metrics.json'));
    assert.equal(readFileSync(path.join(plan.runDir, 'local_profile_aggregate_metrics.json'), 'utf8'), theirs);

    // A merged stage has digests beside its rollouts, and only they are read then.
    const { digestsPath } = mergedPaths(rolloutsPath.replace(/\.jsonl$/, ''));
    mkdirSync(path.dirname(digestsPath), { recursive: true });
    writeFileSync(
      digestsPath,
      [lines[2]!, lines[0]!, lines[1]!].map((l) => `${rolloutDigest(parseKinded(l).kinded as JsonDict)}\n`).join(''),
    );
    writeFileSync(rolloutsPath, 'not JSON\n');
    await aggregate(input);
    assert.equal(readFileSync(path.join(plan.runDir, 'local_profile_aggregate_metrics.json'), 'utf8'), theirs);
  },
);

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

test(
  "NeMo Gym's ng_aggregate_rollouts accepts the pipeline's rollouts and writes the same metrics",
  { timeout: 180_000 },
  async () => {
    const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh')], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1)!;
    const dir = freshDir();
    const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8').split('\n').slice(0, 3);
    writeJsonl(
      path.join(dir, 'tasks.jsonl'),
      tasks.map((t) => JSON.parse(t)),
    );
    const stack = await startEmbeddedStack({ seed: 7, log: () => undefined });
    try {
      const plan = collectPlan(
        dir,
        { head_url: stack.urls.head },
        { agent_name: stack.names.agent, num_repeats: 2 },
        GYM_040,
      );
      await runChunks(plan, (await materialize(plan)).chunks);
      await merge(plan);
      const ngDir = path.join(dir, 'nemo_gym');
      mkdirSync(ngDir);
      await promisify(execFile)(
        path.join(binDir, 'ng_aggregate_rollouts'),
        [
          `+input_glob=${outPrefixOf(plan)}.jsonl`,
          `+output_jsonl_fpath=${path.join(ngDir, 'rollouts.jsonl')}`,
          '+merge_shards=false',
          '+head_server.host=127.0.0.1',
          `+head_server.port=${new URL(stack.urls.head).port}`,
        ],
        { cwd: ngDir, env: { ...process.env, WANDB_MODE: 'disabled' } },
      );
      const theirs = JSON.parse(readFileSync(path.join(ngDir, 'rollouts_aggregate_metrics.json'), 'utf8')) as Row[];
      const ours = JSON.parse(readFileSync(`${outPrefixOf(plan)}_aggregate_metrics.json`, 'utf8')) as Row[];
      assert.equal(ours[0]!.group_level_metrics.length, 3);
      assert.deepEqual(ours, theirs);
    } finally {
      await stack.close();
    }
  },
);
