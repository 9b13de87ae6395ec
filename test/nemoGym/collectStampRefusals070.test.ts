import { after, before, test } from 'node:test';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import { ENVIRONMENT_SERVER, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';
import { assertBothRefuse, withRelay } from '../helpers/collectStamped070';

// The rows whose `_ng_environment_server` stamp NeMo Gym 0.7.0 refuses before it dispatches any
// (rollout_collection.py `_validate_environment_servers`), under `environment_routing_mode: agent`:
// 0.7.0 and our collect refuse the same rows in the same words, ours naming the task file's line.
// As in collectStampedGroups070.test.ts, routes for a taskset no row has give 0.7.0 the head's config.
const OPTIONS = { environment_server_routes: { no_such_taskset: ENVIRONMENT_SERVER } };

const SEED = 41;
const ALIAS = 'concierge_agent';
/** A relay to the stack's agent that also names the resources server its rows must come from. */
const RESOURCED_RELAY = 'front_desk_relay';
const { opened, task, caseRows } = collectCases(SEED, [ALIAS], 'pivot-miner-stamp-refusals-070-');
let servers: CollectServers;
let agent: string;
let resources: string;
let closeHead: (() => Promise<void>) | undefined;

before(async () => {
  const started = await opened();
  agent = started.agent;
  resources = started.servers.stack.names.resources;
  const resourcesServer = { resources_server: { type: 'resources_servers', name: resources } };
  ({ servers, close: closeHead } = await withRelay(
    started.servers,
    ENVIRONMENT_SERVER,
    RESOURCED_RELAY,
    resourcesServer,
  ));
});
after(async () => closeHead?.());

/** Both collections of `rows` stop before any rollout with `message`, ours naming `line`. */
async function refusedByBoth(name: string, rows: Record<string, unknown>[], message: string, line: number) {
  const { caseDir, rowsFile } = caseRows(name, rows);
  const collection = { rowsFile, numRepeats: 1, withoutAgentName: true, options: OPTIONS };
  await assertBothRefuse(servers, caseDir, collection, { message, line });
}

test("a row stamped with a server that does not front its agent is refused by both, in 0.7.0's words", async () => {
  const aliasServer = legacyEnvironmentServerName(ALIAS);
  const rows = [
    task(0, { agent_ref: { name: ALIAS } }),
    task(1, { agent_ref: { name: agent }, _ng_environment_server: aliasServer }),
  ];
  const message = `Row agent_ref '${agent}' is not an agent of environment server '${aliasServer}': '${ALIAS}'`;
  await refusedByBoth('foreign-stamp', rows, message, 2);
});

test("a row stamped with a server the config does not list is refused by both, in 0.7.0's words", async () => {
  const rows = [
    task(0, { agent_ref: { name: agent }, _ng_environment_server: ENVIRONMENT_SERVER }),
    task(1, { agent_ref: { name: ALIAS } }),
    task(2, { agent_ref: { name: agent }, _ng_environment_server: 'lost_relay' }),
  ];
  // 0.7.0 looks the server up before it validates the stamps: omegaconf's ConfigKeyError, in its words.
  const message = 'Missing key lost_relay';
  await refusedByBoth('unlisted-stamp', rows, message, 3);
});

test("a row whose task_source is not its stamped server's resources server is refused by both, in 0.7.0's words", async () => {
  const rows = [
    task(0, { agent_ref: { name: agent }, _ng_environment_server: RESOURCED_RELAY, task_source: resources }),
    task(1, { agent_ref: { name: agent }, _ng_environment_server: RESOURCED_RELAY, task_source: 'weather_desk' }),
  ];
  const message =
    `Row task_source 'weather_desk' does not match environment server '${RESOURCED_RELAY}' ` +
    `resources server '${resources}'`;
  await refusedByBoth('foreign-task-source', rows, message, 2);
});
