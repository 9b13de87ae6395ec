import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import { assertSameProfile } from '../helpers/collect070';
import { type AnswerScript, ENVIRONMENT_SERVER, type CollectServers } from '../helpers/collect070Servers';
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
/** The servers the relay was added to: the agent front reads their `script`. */
let front: CollectServers;
let agent: string;
let closeHead: (() => Promise<void>) | undefined;

before(async () => {
  ({ servers: front, agent } = await opened());
  ({ servers, close: closeHead } = await withRelay(front, ENVIRONMENT_SERVER, OTHER_RELAY));
});
after(async () => closeHead?.());

/** One agent's rows stamped with each of its two relays, the alias's unstamped and stamped with its own server. */
function mixedRows(): Record<string, unknown>[] {
  return [
    task(0, { agent_ref: { name: agent }, _ng_environment_server: OTHER_RELAY }),
    task(1, { agent_ref: { name: agent }, _ng_environment_server: ENVIRONMENT_SERVER }),
    task(2, { agent_ref: { name: ALIAS } }),
    task(2, { agent_ref: { name: agent }, _ng_environment_server: OTHER_RELAY }),
    task(0, { agent_ref: { name: ALIAS }, _ng_environment_server: legacyEnvironmentServerName(ALIAS) }),
  ];
}

test("stamped rows go through their stamped relay and are grouped there, unstamped ones by their agent's server, as 0.7.0's", async () => {
  const rows = mixedRows();
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

/** The agent leaves no row for task 0's first repeat (stamped) and task 2's (unstamped), and fails task 1's second (stamped). */
const dropAndFail: AnswerScript = (request, answer) => {
  const { _ng_task_index: t, _ng_rollout_index: r } = request;
  if ((t === 0 || t === 2) && r === 0) return answer.replace(/}$/, ',"_ng_no_persist":true}');
  if (t === 1 && r === 1)
    return answer
      .replace(/"reward":[-0-9.eE]+,/, '')
      .replace(/}$/, ',"_ng_failure_class":"agent_run_error","_ng_failure_message":"scripted"}');
  return answer;
};

test("counted zeros of stamped rows land in their stamped groups, as 0.7.0's", async () => {
  const { caseDir, rowsFile } = caseRows('counted', mixedRows());
  front.script = dropAndFail;
  try {
    const ours = await assertSameMixedCollection(servers, caseDir, {
      rowsFile,
      numRepeats: 2,
      withoutAgentName: true,
      options: { ...OPTIONS, count_missing_rollouts_as_zero: true, count_failure_classes_as_zero: ['agent_run_error'] },
    });
    assert.equal(ours.rollouts.length, 7, 'two rollouts left no row and one failed');
    assert.equal(ours.failures.length, 1);
  } finally {
    front.script = (_request, answer) => answer;
  }
});
