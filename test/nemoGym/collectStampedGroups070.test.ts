import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import {
  assertSameProfile,
  collectWith070,
  collectWithPivotMiner,
  ENVIRONMENT_SERVER,
  type CollectServers,
} from '../helpers/collect070';
import { collectCases } from '../helpers/collectCases';
import { assertSameMixedCollection, withRelay } from '../helpers/collectStamped070';

// Under `environment_routing_mode: agent` (the default), NeMo Gym 0.7.0 posts a row whose data
// already stamps `_ng_environment_server` (a legacy run's materialized inputs fed back in, say)
// through that server, and groups its rollout there for aggregate metrics and reward profiling
// (rollout_collection.py `_run_examples_with_metadata`, `_call_aggregate_metrics`; reward_profile.py
// by `rollout_run_key`); a row without a stamp goes through its agent's one server. Here one agent
// has two relays in front of it, each stamped on some of its rows, and another agent (an alias of
// the same stack) has its one server and unstamped rows: 0.7.0 and our collect on the same rows and
// servers write the same rows, aggregate metrics and profile files.
//
// 0.7.0 looks a stamped row's server up in the collector's own config, which without a head-config
// client (non-agent routing, or `environment_server_routes`) holds only its command line, so a
// server listed only by the head fails with ConfigKeyError; pivot-miner reads the head's config. Both
// collections here get routes for a taskset no row has, which routes nothing and gives 0.7.0 the
// head's config (docs/nemo-gym.md).
const OPTIONS = { environment_server_routes: { no_such_taskset: ENVIRONMENT_SERVER } };

const SEED = 37;
const ALIAS = 'concierge_agent';
const OTHER_RELAY = 'front_desk_relay';
const { opened, task, caseRows } = collectCases(SEED, [ALIAS], 'pivot-miner-stamped-groups-070-');
let servers: CollectServers;
let agent: string;
let closeHead: (() => Promise<void>) | undefined;

before(async () => {
  const base = await opened();
  agent = base.agent;
  ({ servers, close: closeHead } = await withRelay(base.servers, ENVIRONMENT_SERVER, OTHER_RELAY));
});
after(async () => closeHead?.());

test("stamped rows go through their stamped relay and are grouped there, unstamped ones by their agent's server, as 0.7.0's", async () => {
  const rows = [
    task(0, { agent_ref: { name: agent }, _ng_environment_server: OTHER_RELAY }),
    task(1, { agent_ref: { name: agent }, _ng_environment_server: ENVIRONMENT_SERVER }),
    task(2, { agent_ref: { name: ALIAS } }),
    task(2, { agent_ref: { name: agent }, _ng_environment_server: OTHER_RELAY }),
    task(0, { agent_ref: { name: ALIAS }, _ng_environment_server: legacyEnvironmentServerName(ALIAS) }),
  ];
  const { caseDir, rowsFile } = caseRows('mixed', rows);
  const ours = await assertSameMixedCollection(servers, caseDir, {
    rowsFile,
    numRepeats: 2,
    withoutAgentName: true,
    options: OPTIONS,
  });
  const entries = ours.aggregateMetrics as Record<string, unknown>[];
  assert.deepEqual(
    entries.map((e) => [e.agent_ref, e._ng_environment_server]),
    [
      // Two servers front the agent, so each of its groups is named by its server (`label_runs`).
      [{ name: ALIAS }, legacyEnvironmentServerName(ALIAS)],
      [{ name: OTHER_RELAY }, OTHER_RELAY],
      [{ name: ENVIRONMENT_SERVER }, ENVIRONMENT_SERVER],
    ],
  );
  await assertSameProfile(ours.prefix);
});

test("a row stamped with a server that does not front its agent is refused by both, in 0.7.0's words", async () => {
  const aliasServer = legacyEnvironmentServerName(ALIAS);
  const rows = [
    task(0, { agent_ref: { name: ALIAS } }),
    task(1, { agent_ref: { name: agent }, _ng_environment_server: aliasServer }),
  ];
  const { caseDir, rowsFile } = caseRows('foreign-stamp', rows);
  const message = `Row agent_ref '${agent}' is not an agent of environment server '${aliasServer}': '${ALIAS}'`;
  const collection = {
    rowsFile,
    numRepeats: 1,
    withoutAgentName: true,
    options: OPTIONS,
    stopsWith: new RegExp(message),
  };
  await collectWith070(servers, caseDir, collection);
  await assert.rejects(
    collectWithPivotMiner(servers, caseDir, { ...collection, stopsWith: undefined }),
    (err: Error) => {
      assert.ok(err.message.includes(message), err.message);
      assert.match(err.message, /tasks\.jsonl:2/);
      return true;
    },
  );
});
