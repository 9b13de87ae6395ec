import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { pipelineConfigSchema } from '../../contracts/config';
import { assertSameCollection, assertSameProfile, collectWith070 } from '../helpers/collect070';
import { indexOrder } from '../helpers/collect070Lines';
import { ENVIRONMENT_SERVER, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';
import { collectPlan, materialize } from '../activities/fakeGym';

// NeMo Gym 0.7.0's `environment_routing_mode: legacy`, run by 0.7.0's ng_collect_rollouts and by our
// collect stage on the same rows and servers: every row goes through `environment_server_name` (a
// legacy_agent relay in front of the stack's agent), stamped `_ng_environment_server`, a row without
// agent_ref given the relay's agent; the same materialized inputs, rollouts, sidecar and aggregate
// metrics (test/helpers/collect070.ts), and the same refusals of a row naming another agent and of
// configs 0.7.0's validator refuses.

const SEED = 11;
const SECOND = 'second_tool_agent';
const LEGACY = { environment_routing_mode: 'legacy', environment_server_name: ENVIRONMENT_SERVER };
const { opened, task, caseRows } = collectCases(SEED, [SECOND], 'pivot-miner-env-routing-070-');
let servers: CollectServers;
let agent: string;

before(async () => void ({ servers, agent } = await opened()));

const parsed = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('legacy routing stamps every row with the relay and fills agent_ref last', { timeout: 300_000 }, async () => {
  const typed = { type: 'responses_api_agents', name: agent };
  const { caseDir, rowsFile } = caseRows('legacy', [task(0), task(1, { agent_ref: typed }), task(2)]);
  const ours = await assertSameCollection(servers, caseDir, {
    rowsFile,
    numRepeats: 2,
    withoutAgentName: true,
    stamped: true,
    options: LEGACY,
  });
  const rows = parsed(ours.materializedInputs);
  assert.deepEqual(
    rows.map((r) => r._ng_environment_server),
    Array.from({ length: 6 }, () => ENVIRONMENT_SERVER),
  );
  assert.deepEqual(Object.keys(rows[0]!).slice(-4), [
    '_ng_task_index',
    '_ng_environment_server',
    '_ng_rollout_index',
    'agent_ref',
  ]);
  assert.deepEqual(rows[2]!.agent_ref, typed, "a row naming the relay's agent keeps its agent_ref as it is");
  assert.ok(ours.rollouts.every((line) => line.includes(`"_ng_environment_server":"${ENVIRONMENT_SERVER}"`)));
  const entries = ours.aggregateMetrics as Record<string, unknown>[];
  assert.deepEqual(
    entries.map((e) => e._ng_environment_server),
    [ENVIRONMENT_SERVER],
  );
  await assertSameProfile(ours.prefix);
});

test('legacy routing keys a num_repeats dict by task_source, then the environment server', async () => {
  const { caseDir, rowsFile } = caseRows('legacy_repeats', [task(0, { task_source: 'travel' }), task(1), task(2)]);
  const ours = await assertSameCollection(servers, caseDir, {
    rowsFile,
    numRepeats: { travel: 1, [ENVIRONMENT_SERVER]: 2, [agent]: 3 },
    withoutAgentName: true,
    stamped: true,
    options: LEGACY,
  });
  assert.deepEqual(indexOrder(ours.materializedInputs), ['0:0', '1:0', '1:1', '2:0', '2:1']);
});

test('legacy routing refuses a row naming an agent the relay does not front, as 0.7.0 does', async () => {
  const { caseDir, rowsFile } = caseRows('legacy_other_agent', [task(0), task(1, { agent_ref: { name: SECOND } })]);
  const refusal = `Row agent_ref '${SECOND}' is not an agent of environment server '${ENVIRONMENT_SERVER}': '${agent}'`;
  const stopsWith = new RegExp(refusal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  await collectWith070(servers, caseDir, {
    rowsFile,
    numRepeats: 1,
    withoutAgentName: true,
    options: LEGACY,
    stopsWith,
  });
  const baseDir = path.join(caseDir, 'ours');
  mkdirSync(baseDir);
  copyFileSync(rowsFile, path.join(baseDir, 'tasks.jsonl'));
  const plan = collectPlan(baseDir, { head_url: servers.head.url }, { agent_name: undefined, ...LEGACY });
  await assert.rejects(materialize(plan), (err: Error) => err.message.includes(`tasks.jsonl:2: ${refusal}`));
});

test("0.7.0's environment routing config errors are ours", async () => {
  const { caseDir, rowsFile } = caseRows('config_errors', [task(0)]);
  const cases: Array<[Record<string, string>, string]> = [
    [
      { environment_routing_mode: 'legacy' },
      'environment_server_name is required when environment_routing_mode=legacy',
    ],
    [
      { environment_routing_mode: 'taskset' },
      'environment_server_routes are required when environment_routing_mode=taskset',
    ],
  ];
  for (const [options, message] of cases) {
    await collectWith070(servers, path.join(caseDir, options.environment_routing_mode!), {
      rowsFile,
      numRepeats: 1,
      withoutAgentName: true,
      options,
      stopsWith: new RegExp(message),
    });
    const config = { name: 'x', collect: { input_jsonl: 'tasks.jsonl', ...options } };
    const issues = pipelineConfigSchema.safeParse(config).error?.issues.map((i) => i.message);
    assert.ok(issues?.includes(message), `${message} in ${String(issues)}`);
  }
});
