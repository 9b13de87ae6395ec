import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import {
  agentType,
  ambiguousEnvironmentServerMessage,
  declaredEnvironmentServers,
  legacyEnvironmentServerName,
  type GlobalConfig,
} from '../../gym/environmentServers';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

// The environment server an agent's aggregate-metrics entry names, against the real NeMo Gym 0.7.0:
// its own functions (global_config.py legacy_environment_server_name, rollout_collection.py
// _environment_servers_by_agent) run on the same names and config, and answer the same.

const NAMES: Array<[string, string]> = [
  ['x_simple_agent', 'simple_agent'],
  ['demo_tool_agent', 'simple_agent'],
  ['workplace_assistant_simple_agent', 'simple_agent'],
  ['simple_agent', 'simple_agent'],
  ['weather__agent', 'tool_agent'],
  ['solver', 'simple_agent'],
  ['math_agent_agent', 'agent'],
];

const agent = (type: string) => ({ responses_api_agents: { [type]: { entrypoint: 'app.py', host: 'h', port: 1 } } });

const CONFIG: GlobalConfig = {
  head_server: { host: '127.0.0.1', port: 1 },
  alpha_simple_agent: agent('simple_agent'),
  beta_agent: agent('tool_agent'),
  gamma_agent: agent('simple_agent'),
  alpha_env: { environment_servers: { legacy_agent: { agent_server: { name: 'alpha_simple_agent' } } } },
  // Two servers front beta: a session-based one naming it by type, and its legacy twin.
  beta_sessions: {
    environment_servers: { sessions: { assistant: { type: 'responses_api_agents', name: 'beta_agent' } } },
  },
  beta_relay: {
    environment_servers: {
      legacy_agent: {
        agent_server: { type: 'responses_api_agents', name: 'beta_agent' },
        other: { name: 'gamma_agent' },
      },
    },
  },
};

const PYTHON = `
import json, sys
from omegaconf import OmegaConf
from nemo_gym.global_config import legacy_environment_server_name
from nemo_gym.rollout_collection import _environment_server_for_agent, _environment_servers_by_agent
case = json.load(sys.stdin)
by_agent = _environment_servers_by_agent(OmegaConf.create(case["config"]))
refusals = {}
for agent, servers in by_agent.items():
    try:
        _environment_server_for_agent(agent, by_agent)
    except Exception as error:
        refusals[agent] = str(error)
print(json.dumps({
    "names": [legacy_environment_server_name(n, t) for n, t in case["names"]],
    "by_agent": by_agent,
    "refusals": refusals,
}))
`;

test("0.7.0's environment server names and declared servers, from its own functions", { timeout: 900_000 }, () => {
  const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
  const theirs = JSON.parse(
    execFileSync(python, ['-c', PYTHON], { input: JSON.stringify({ names: NAMES, config: CONFIG }), encoding: 'utf8' }),
  ) as { names: string[]; by_agent: Record<string, string[]>; refusals: Record<string, string> };
  assert.deepEqual(
    NAMES.map(([name, type]) => legacyEnvironmentServerName(name, type)),
    theirs.names,
  );
  for (const name of ['alpha_simple_agent', 'beta_agent', 'gamma_agent', 'nobody_agent'])
    assert.deepEqual(declaredEnvironmentServers(CONFIG, name), theirs.by_agent[name] ?? [], name);
  assert.deepEqual(theirs.by_agent.beta_agent, ['beta_sessions', 'beta_relay'], 'the case is the one meant');
  // The one agent two servers front is refused, in 0.7.0's words.
  assert.deepEqual(Object.keys(theirs.refusals), ['beta_agent']);
  assert.equal(
    ambiguousEnvironmentServerMessage('beta_agent', ['beta_sessions', 'beta_relay']),
    theirs.refusals.beta_agent,
  );
});

test('an agent’s type is its one responses_api_agents key; without one only `_agent` is stripped', () => {
  assert.equal(agentType(CONFIG, 'alpha_simple_agent'), 'simple_agent');
  assert.equal(agentType(CONFIG, 'alpha_env'), undefined);
  assert.equal(agentType(CONFIG, 'nobody_agent'), undefined);
  assert.equal(legacyEnvironmentServerName('x_simple_agent'), 'x_simple_environment_server');
  assert.equal(legacyEnvironmentServerName('x_simple_agent', 'simple_agent'), 'x_environment_server');
});
