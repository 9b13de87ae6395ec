import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameCollection, assertSameProfile } from '../helpers/collect070';
import { ENVIRONMENT_SERVER, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';
import { withRelay } from '../helpers/collectStamped070';

// NeMo Gym 0.7.0 groups rollouts for aggregation and reward profiling by the environment server
// stamped on them (`_ng_environment_server`, rollout_collection.py `_call_aggregate_metrics`,
// global_config.py `rollout_run_key`), labelled by their agent when that names one group
// (`label_runs`), and so does pivot-miner (collectStampedGroups070.test.ts: rows whose data stamps
// them under agent routing). Under `environment_routing_mode: legacy` every row goes through one
// relay to its one agent, so both give one group, named by the relay and labelled by the agent, even with a second relay in front of the
// same agent and a row the data stamped with it: 0.7.0 and our collect on the same rows, against a
// head that lists both relays, write the same files.

const SEED = 31;
const OTHER_RELAY = 'front_desk_relay';
const { opened, task, caseRows } = collectCases(SEED, [], 'pivot-miner-env-groups-070-');
let servers: CollectServers;
let agent: string;
let closeHead: (() => Promise<void>) | undefined;

before(async () => {
  const base = await opened();
  agent = base.agent;
  ({ servers, close: closeHead } = await withRelay(base.servers, ENVIRONMENT_SERVER, OTHER_RELAY));
});
after(async () => closeHead?.());

for (const relay of [ENVIRONMENT_SERVER, OTHER_RELAY])
  test(`legacy through ${relay} with two relays in front of one agent: one group, as 0.7.0's`, async () => {
    const other = relay === ENVIRONMENT_SERVER ? OTHER_RELAY : ENVIRONMENT_SERVER;
    const rows = [task(0), task(1, { _ng_environment_server: other }), task(2, { agent_ref: { name: agent } })];
    const { caseDir, rowsFile } = caseRows(relay, rows);
    const ours = await assertSameCollection(servers, caseDir, {
      rowsFile,
      numRepeats: 2,
      withoutAgentName: true,
      stamped: true,
      options: { environment_routing_mode: 'legacy', environment_server_name: relay },
    });
    const entries = ours.aggregateMetrics as Record<string, unknown>[];
    assert.deepEqual(
      entries.map((e) => [e.agent_ref, e._ng_environment_server]),
      [[{ name: agent }, relay]],
    );
    assert.ok(!ours.materializedInputs.includes(other), 'the data stamp gives way to the relay');
    await assertSameProfile(ours.prefix);
  });
