import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { LogLevel, Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { materializeStage } from '../../../activities/stage/materialize';
import { JsonlError } from '../../../gym/errors';
import { ConfigError } from '../../../contracts/errors';
import { ambiguousEnvironmentServerMessage } from '../../../gym/environmentServers';
import { readJsonlSync } from '../../helpers/jsonl';
import { collectPlan, materialize, outPrefixOf, fakeGymForFile, startFakeHead, taskRow, writeJsonl } from '../fakeGym';

// Per-row agent routing at materialization, as NeMo Gym 0.7.0 routes rows: collect.agent_name
// re-routes every row, without it rows keep their own agent_ref (or agent_map routes them), and a
// name no server knows stops the stage before any rollout runs.

const ok = () => ({ response: { output: [] }, reward: 1 });
const gym = fakeGymForFile({ alpha: ok, beta: ok }, 'pivot-miner-materialize-');
const { agents, freshDir } = gym;

test('one file may mix agents: without agent_name each row keeps its agent_ref; agent_name re-routes all', async () => {
  const rows = [
    taskRow('a', { agent_ref: { type: 'responses_api_agents', name: 'beta' } }),
    taskRow('b', { task_source: 'bs' }),
    taskRow('c', { agent_ref: { name: 'alpha' } }),
  ];
  const refs = async (collect: Record<string, unknown>) => {
    const dir = freshDir();
    writeJsonl(path.join(dir, 'tasks.jsonl'), rows);
    const plan = collectPlan(dir, { head_url: gym.head.url }, collect);
    assert.equal((await materialize(plan)).rows, 3);
    return readJsonlSync<Record<string, any>>(`${outPrefixOf(plan)}_materialized_inputs.jsonl`).map((r) => r.agent_ref);
  };
  assert.deepEqual(await refs({ agent_name: undefined, agent_map: { bs: 'alpha' } }), [
    { type: 'responses_api_agents', name: 'beta' },
    { name: 'alpha' },
    { name: 'alpha' },
  ]);
  assert.deepEqual(await refs({ agent_name: 'alpha' }), [{ name: 'alpha' }, { name: 'alpha' }, { name: 'alpha' }]);
});

test('an agent name no server knows is refused naming file, line and name, before any rollout', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [
    taskRow('a', { agent_ref: { name: 'alpha' } }),
    taskRow('b', { agent_ref: { name: 'beta' } }),
    taskRow('c', { agent_ref: { name: 'gamma' } }),
    // A resources server is listed by the head server, but it is not an agent.
    taskRow('d', { agent_ref: { name: 'some_resources_server' } }),
  ]);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { agent_name: undefined });
  await assert.rejects(materialize(plan), (err: Error) => {
    assert.ok(err instanceof JsonlError, String(err));
    assert.equal(err.file, path.join(dir, 'tasks.jsonl'));
    assert.equal(err.line, 3);
    assert.match(
      err.message,
      /tasks\.jsonl:3: agent_ref\.name "gamma" is not an agent the servers know \(known: "alpha", "beta"/,
    );
    return true;
  });
  // Not finished, so nothing can be chunked from it, and no agent saw a row.
  assert.equal(existsSync(`${outPrefixOf(plan)}_materialized_inputs.meta.json`), false);
  assert.equal(agents.alpha.runs.length + agents.beta.runs.length, 0);
});

test("an agent two environment servers front stops the stage before any rollout, in 0.7.0's words", async () => {
  const relay = (agent: string) => ({ environment_servers: { legacy_agent: { agent_server: { name: agent } } } });
  const head = await startFakeHead([agents.alpha, agents.beta], {
    beta_relay: relay('beta'),
    beta_sessions: { environment_servers: { sessions: { assistant: { type: 'responses_api_agents', name: 'beta' } } } },
    alpha_relay: relay('alpha'),
  });
  const routed = (agentName: string, otherStages = {}) => {
    const dir = freshDir();
    writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a', { agent_ref: { name: 'alpha' } }), taskRow('b')]);
    return collectPlan(dir, { head_url: head.url }, { agent_name: agentName }, otherStages);
  };
  try {
    // One server in front of alpha: its rows go through it.
    assert.equal((await materialize(routed('alpha'))).rows, 2);
    const plan = routed('beta');
    await assert.rejects(materialize(plan), (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.equal(err.message, ambiguousEnvironmentServerMessage('beta', ['beta_relay', 'beta_sessions']));
      return true;
    });
    assert.equal(existsSync(`${outPrefixOf(plan)}_materialized_inputs.meta.json`), false);
    // A stage whose files follow 0.4.0 names no environment server: 0.4.0's collector had none.
    assert.equal((await materialize(routed('beta', { profile: { nemo_gym_version: '0.4.0' } }))).rows, 2);
    assert.equal(agents.alpha.runs.length + agents.beta.runs.length, 0);
  } finally {
    await head.close();
  }
});

test("a row its data stamps goes through that server, checked in 0.7.0's words; 0.4.0 checks no stamp", async () => {
  const head = await startFakeHead([agents.alpha, agents.beta], {
    beta_relay: { environment_servers: { legacy_agent: { agent_server: { name: 'beta' } } } },
    beta_sessions: { environment_servers: { sessions: { assistant: { type: 'responses_api_agents', name: 'beta' } } } },
  });
  const stamped = (agent: string, server: string, otherStages = {}) => {
    const dir = freshDir();
    const rows = [
      taskRow('a', { agent_ref: { name: 'alpha' } }),
      taskRow('b', { agent_ref: { name: agent }, _ng_environment_server: server }),
    ];
    writeJsonl(path.join(dir, 'tasks.jsonl'), rows);
    return collectPlan(dir, { head_url: head.url }, { agent_name: undefined }, otherStages);
  };
  const refused = (plan: ReturnType<typeof stamped>, reason: string) =>
    assert.rejects(materialize(plan), (err: Error) => {
      assert.ok(err instanceof JsonlError, String(err));
      assert.equal(err.line, 2);
      assert.ok(err.message.endsWith(reason), err.message);
      return true;
    });
  try {
    // Two servers front beta, but its one row names its server: only alpha's rows need one.
    const plan = stamped('beta', 'beta_relay');
    assert.equal((await materialize(plan)).rows, 2);
    const meta = JSON.parse(readFileSync(`${outPrefixOf(plan)}_materialized_inputs.meta.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(meta.environmentServers, [null, 'beta_relay']);
    await refused(
      stamped('beta', 'nowhere'),
      "Missing key nowhere: the row's _ng_environment_server names no environment server of the running config",
    );
    await refused(
      stamped('alpha', 'beta_relay'),
      "Row agent_ref 'alpha' is not an agent of environment server 'beta_relay': 'beta'",
    );
    await refused(stamped('beta', 'beta_sessions'), 'which passes rows to its agent unchanged');
    assert.equal((await materialize(stamped('beta', 'nowhere', { profile: { nemo_gym_version: '0.4.0' } }))).rows, 2);
    assert.equal(agents.alpha.runs.length + agents.beta.runs.length, 0);
  } finally {
    await head.close();
  }
});

test('servers.agent_url serves collect.agent_name only', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a'), taskRow('b', { agent_ref: { name: 'beta' } })]);
  // fan_out sends row b to beta as well as to alpha, which agent_url is.
  const plan = collectPlan(dir, { agent_url: agents.alpha.server.url }, { fan_out: { beta: ['alpha', 'beta'] } });
  await assert.rejects(
    materialize(plan),
    /tasks\.jsonl:2: agent_ref\.name "beta" is not an agent the servers know \(known: "alpha"/,
  );
  const unnamed = collectPlan(freshDir(), { agent_url: agents.alpha.server.url }, { agent_name: undefined });
  await assert.rejects(materialize(unnamed), /servers\.agent_url serves collect\.agent_name .* which is not set/);
});

test('a resources server name is not an agent even when it is the only row name', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a', { agent_ref: { name: 'some_resources_server' } })]);
  await assert.rejects(
    materialize(collectPlan(dir, { head_url: gym.head.url }, { agent_name: undefined })),
    /tasks\.jsonl:1: agent_ref\.name "some_resources_server"/,
  );
});

test('a stage materialized afresh starts with no failures sidecar; a resume keeps the one it has', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a'), taskRow('b')]);
  const plan = collectPlan(dir, { head_url: gym.head.url });
  const sidecar = `${outPrefixOf(plan)}_failures.jsonl`;
  const stale = { _ng_task_index: 0, _ng_rollout_index: 0, attempt: 1, failure_class: 'http_5xx', error: 'old run' };
  writeJsonl(sidecar, [stale]);
  await materialize(plan);
  assert.equal(existsSync(sidecar), false, "another run's failure lines are not this run's");

  writeJsonl(sidecar, [{ ...stale, error: 'this run' }]);
  await materialize(plan);
  assert.deepEqual(
    readJsonlSync<Record<string, unknown>>(sidecar).map((f) => f.error),
    ['this run'],
    'a resume (materialized inputs in place) keeps its failures',
  );
});

test("0.7.0's routing warnings go to the worker's log, once every row is routed", async () => {
  const dir = freshDir();
  const rows = [
    taskRow('a', { agent_ref: { name: 'beta' } }),
    taskRow('b'),
    taskRow('c', { agent_ref: { name: 'beta' } }),
  ];
  writeJsonl(path.join(dir, 'tasks.jsonl'), rows);
  const plan = collectPlan(dir, { head_url: gym.head.url }, { num_repeats: { alpha: 1, alpah: 2 } });
  const warned: string[] = [];
  const record = (level: LogLevel) => (message: string) => void (level === 'WARN' && warned.push(message));
  const logger: Logger = {
    log: (level, message) => record(level)(message),
    ...Object.fromEntries(
      (['trace', 'debug', 'info', 'warn', 'error'] as const).map((l) => [l, record(l.toUpperCase() as LogLevel)]),
    ),
  } as Logger;
  const input = { plan, stage: 'collect' as const, inputPath: 'tasks.jsonl', outPrefix: outPrefixOf(plan) };
  await new MockActivityEnvironment({}, { logger }).run(materializeStage, input);
  assert.deepEqual(warned, [
    "agent_map overrode agent_ref values already present in the data: [('beta', 'alpha')]. Prior to this release, " +
      '+agent_name only filled rows missing an agent_ref; it now re-routes every row.',
    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): ['alpah']",
  ]);
});
