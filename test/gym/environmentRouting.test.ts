import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { collectSchema } from '../../contracts/stageConfig';
import { routeRow } from '../../gym/agentRouting';
import { isMaterializedTaskRow } from '../../gym/environmentRouting';
import { legacyRelayAgent, type GlobalConfig } from '../../gym/environmentServers';
import { JsonlError } from '../../gym/errors';
import { materializeRows } from '../../gym/materialize';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

// NeMo Gym 0.7.0's environment routing, the pure parts: which rows are materialized taskset rows
// (against 0.7.0's own function), the legacy relay's agent, a legacy route, the config checks, and
// materialization's bytes; the whole collection against the real 0.7.0 is in
// test/nemoGym/collectEnvironmentRouting070.test.ts.

const ROWS: Record<string, unknown>[] = [
  { task_id: { taskset: 'travel', task: 't1' }, task_input: { x: 1 } },
  { task_id: { task: 't1' }, task_input: null },
  { task_id: 'travel', task_input: {} },
  { task_id: { taskset: 'travel' } },
  { task_input: {} },
  { responses_create_params: { input: 'hi' } },
];

test("materialized taskset rows are the ones 0.7.0's is_materialized_task_row finds", { timeout: 900_000 }, () => {
  const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
  const script = [
    'import json, sys',
    'from nemo_gym.episode_types import is_materialized_task_row',
    'print(json.dumps([is_materialized_task_row(r) for r in json.load(sys.stdin)]))',
  ].join('\n');
  const theirs = JSON.parse(
    execFileSync(python, ['-c', script], { input: JSON.stringify(ROWS), encoding: 'utf8' }),
  ) as boolean[];
  assert.deepEqual(ROWS.map(isMaterializedTaskRow), theirs);
  assert.deepEqual(theirs, [true, true, false, false, false, false], 'the cases are the ones meant');
});

const CONFIG: GlobalConfig = {
  relay: { environment_servers: { legacy_agent: { host: 'h', port: 1, agent_server: { name: 'alpha_agent' } } } },
  sessions: { environment_servers: { single_agent_turn: { agent_server: { name: 'alpha_agent' } } } },
  alpha_agent: { responses_api_agents: { simple_agent: { host: 'h', port: 2 } } },
};

test("legacy routing's relay: a legacy_agent server's agent_server, anything else refused with why", () => {
  assert.deepEqual(legacyRelayAgent(CONFIG, 'relay'), { agent: 'alpha_agent' });
  const refused = (name: string) => {
    const answer = legacyRelayAgent(CONFIG, name);
    return 'reason' in answer ? answer.reason : '';
  };
  assert.equal(refused('nowhere'), "Environment servers are not present in the running config: ['nowhere']");
  assert.equal(refused('alpha_agent'), "Environment servers are not present in the running config: ['alpha_agent']");
  assert.match(refused('sessions'), /"sessions" is of type single_agent_turn, not a legacy_agent relay/);
});

test('a legacy route: the relay stamped, its agent filled last, repeats keyed by task_source then server', () => {
  const legacy_environment_server = { name: 'relay', agent: 'alpha_agent' };
  const num_repeats = { travel: 1, relay: 2, alpha_agent: 3 };
  const route = (row: Record<string, unknown>) =>
    routeRow(row, { legacy_environment_server, num_repeats, agent_map: { _default: 'x' } }, 'in.jsonl', 4);
  assert.deepEqual(route({}), {
    environmentServer: 'relay',
    lateAgentRef: { name: 'alpha_agent' },
    dispatches: [{ agent: 'alpha_agent', repeats: 2 }],
    repeatKeys: ['relay'],
  });
  assert.deepEqual(route({ agent_ref: { name: 'alpha_agent' }, task_source: 'travel' }), {
    environmentServer: 'relay',
    dispatches: [{ agent: 'alpha_agent', repeats: 1 }],
    repeatKeys: ['travel'],
  });
  assert.throws(
    () => route({ agent_ref: { name: 'beta_agent' } }),
    (err: Error) =>
      err instanceof JsonlError &&
      err.message ===
        "in.jsonl:4: Row agent_ref 'beta_agent' is not an agent of environment server 'relay': 'alpha_agent'",
  );
});

async function materialized(lines: string[], legacy: boolean): Promise<string[]> {
  const records = lines.map((text, i) => ({ value: JSON.parse(text) as unknown, line: i + 1, text }));
  const opts = {
    num_repeats: 2,
    seed_per_repeat: true,
    responses_create_params: {},
    ...(legacy
      ? { legacy_environment_server: { name: 'relay', agent: 'alpha_agent' } }
      : { agent_name: 'alpha_agent' }),
  };
  const out: string[] = [];
  for await (const row of materializeRows(records as never, opts, 'in.jsonl')) out.push(JSON.stringify(row));
  return out;
}

test('materializing under legacy routing: the stamp after the task index, the agent after the rollout index', async () => {
  const row = '{"responses_create_params":{"input":"hi"}}';
  assert.deepEqual(await materialized([row], true), [
    '{"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 0}"}},"_ng_task_index":0,"_ng_environment_server":"relay","_ng_rollout_index":0,"agent_ref":{"name":"alpha_agent"}}',
    '{"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 1}"}},"_ng_task_index":0,"_ng_environment_server":"relay","_ng_rollout_index":1,"agent_ref":{"name":"alpha_agent"}}',
  ]);
  // The default routing is unchanged: the agent before the task index, no stamp.
  assert.deepEqual(await materialized([row], false), [
    '{"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 0}"}},"agent_ref":{"name":"alpha_agent"},"_ng_task_index":0,"_ng_rollout_index":0}',
    '{"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 1}"}},"agent_ref":{"name":"alpha_agent"},"_ng_task_index":0,"_ng_rollout_index":1}',
  ]);
});

test('a materialized taskset row is refused naming its file, line and why, in every mode', async () => {
  const plain = '{"responses_create_params":{"input":"hi"}}';
  const taskset = '{"task_id":{"taskset":"travel"},"task_input":{},"responses_create_params":{"input":"hi"}}';
  for (const legacy of [false, true])
    await assert.rejects(
      materialized([plain, taskset], legacy),
      (err: Error) =>
        err instanceof JsonlError &&
        err.message.startsWith('in.jsonl:2: a materialized taskset row (task_id.taskset "travel" + task_input)') &&
        err.message.includes('pivot-miner posts rows to agents'),
    );
});

test("collect's environment routing keys: 0.7.0's checks, taskset and legacy's ignored options refused", () => {
  const issues = (collect: Record<string, unknown>) =>
    collectSchema
      .safeParse({ input_jsonl: 'x.jsonl', ...collect })
      .error?.issues.map((i) => `${String(i.path[0])}: ${i.message}`) ?? [];
  assert.deepEqual(issues({ environment_routing_mode: 'legacy' }), [
    'environment_server_name: environment_server_name is required when environment_routing_mode=legacy',
  ]);
  assert.deepEqual(issues({ environment_routing_mode: 'taskset' }), [
    'environment_server_routes: environment_server_routes are required when environment_routing_mode=taskset',
  ]);
  const [taskset] = issues({ environment_routing_mode: 'taskset', environment_server_routes: { travel: 'relay' } });
  assert.match(taskset ?? '', /^environment_routing_mode: taskset routing takes only materialized taskset rows/);
  const legacy = { environment_routing_mode: 'legacy', environment_server_name: 'relay' };
  assert.deepEqual(issues(legacy), []);
  assert.deepEqual(
    issues({ ...legacy, agent_name: 'a', fan_out: { a: ['b'] } }).map((i) => i.split(':')[0]),
    ['agent_name', 'fan_out'],
  );
  // 0.7.0 ignores the name and the routes outside their modes; so does pivot-miner.
  assert.deepEqual(issues({ environment_server_name: 'relay', environment_server_routes: { travel: 'relay' } }), []);
  assert.deepEqual(issues({ environment_routing_mode: 'bogus' }).length, 1);
});
