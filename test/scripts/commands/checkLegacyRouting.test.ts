import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { baseDirWith, check, demoTaskLines, problems, removeBaseDirs, type Config } from '../../helpers/checkCli';
import { ENVIRONMENT_SERVER, startCollectServers, type CollectServers } from '../../helpers/collect070Servers';

// `pivot-miner check` under NeMo Gym 0.7.0's `environment_routing_mode: legacy`: it asks the head
// server for the relay's agent, counts the rows as the run will route them, and names a relay the
// head does not list and a row naming another agent.

let servers: CollectServers;

before(async () => {
  servers = await startCollectServers(7);
});

after(async () => {
  await servers?.close();
  removeBaseDirs();
});

function legacyConfig(environmentServer: string): Config {
  return {
    name: 'legacy_check',
    servers: { mode: 'attach', head_url: servers.head.url },
    collect: {
      input_jsonl: 'data/tasks.jsonl',
      num_repeats: 2,
      environment_routing_mode: 'legacy',
      environment_server_name: environmentServer,
    },
    local_profile: { model: { url: servers.stack.urls.model, api: 'responses' } },
  };
}

test('legacy routing: rows counted through the relay; an unlisted relay and another agent named', async () => {
  const lines = demoTaskLines().slice(0, 3);
  const good = await check(baseDirWith(legacyConfig(ENVIRONMENT_SERVER), lines), {});
  assert.equal(good.code, 0, good.stderr);
  assert.match(good.stdout, /agents +demo_tool_agent\n/);
  assert.match(good.stdout, /rollouts +6 /);

  const unlisted = await check(baseDirWith(legacyConfig('nowhere'), lines), {});
  assert.equal(unlisted.code, 1);
  assert.deepEqual(problems(unlisted.stderr), [
    "collect.environment_server_name: Environment servers are not present in the running config: ['nowhere']",
  ]);

  const other = JSON.stringify({ ...(JSON.parse(lines[0]!) as Config), agent_ref: { name: 'other_agent' } });
  const named = await check(baseDirWith(legacyConfig(ENVIRONMENT_SERVER), [...lines, other]), {});
  assert.equal(named.code, 1);
  const [problem, ...rest] = problems(named.stderr);
  assert.deepEqual(rest, []);
  assert.match(
    problem ?? '',
    new RegExp(
      `tasks\\.jsonl:4: Row agent_ref 'other_agent' is not an agent of environment server '${ENVIRONMENT_SERVER}'`,
    ),
  );
});

test('legacy routing with spawned servers: the relay is read when the run starts, a note, not a problem', async () => {
  const config = legacyConfig(ENVIRONMENT_SERVER);
  // Nothing listens on the discard port: the spawned head is not up before ng_run starts.
  config.servers = { mode: 'spawn', head_url: 'http://127.0.0.1:9', command: ['ng_run'] };
  const spawned = await check(baseDirWith(config, demoTaskLines().slice(0, 3)), {});
  assert.equal(spawned.code, 0, spawned.stderr);
  assert.match(
    spawned.stdout + spawned.stderr,
    /environment_server_name: the relay's agent is in the spawned head's config/,
  );
});
