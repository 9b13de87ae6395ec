import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertSameCollection, assertSameProfile } from '../helpers/collect070';
import { indexOrder } from '../helpers/collect070Lines';
import { type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';

// NeMo Gym 0.7.0's row routing at materialization (agent_name over every row, agent_map, fan_out,
// num_repeats per agent), run by 0.7.0's ng_collect_rollouts and by our collect stage on the same
// rows and servers: the same materialized inputs, rollouts in the same order, the same failures
// sidecar and aggregate metrics (test/helpers/collect070Lines.ts says what is compared). The second
// agent is the stack's agent listed again under another name, with its own environment server.

const SEED = 7;
const SECOND = 'second_tool_agent';
const { opened, task, caseRows } = collectCases(SEED, [SECOND], 'pivot-miner-routing-070-');
let servers: CollectServers;
let agent: string;

before(async () => void ({ servers, agent } = await opened()));

const ref = (name: string) => ({ type: 'responses_api_agents', name });

type Materialized = { agent_ref: unknown; _ng_task_index: number; _ng_rollout_index: number };

function materialized(text: string): Materialized[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Materialized);
}

const agentsOf = (text: string) => materialized(text).map((r) => (r.agent_ref as { name: string }).name);

test('agent_name re-routes every row, replacing an agent_ref in its place', { timeout: 300_000 }, async () => {
  const { caseDir, rowsFile } = caseRows('agent_name', [
    task(0, { agent_ref: ref(SECOND) }),
    task(1),
    task(2, { agent_ref: ref(agent) }),
  ]);
  const ours = await assertSameCollection(servers, caseDir, { rowsFile, numRepeats: 2, options: {} });
  const rows = materialized(ours.materializedInputs);
  assert.deepEqual(
    rows.map((r) => r.agent_ref),
    Array.from({ length: 6 }, () => ({ name: agent })),
    'every row names the agent, without the type it had',
  );
  assert.deepEqual(Object.keys(rows[0]!).slice(0, 2), ['task_id', 'agent_ref'], 'a replaced agent_ref keeps its place');
  assert.match(ours.printed070, /agent_map overrode agent_ref values already present in the data/);
  await assertSameProfile(ours.prefix);
});

test('agent_map routes by agent_ref.name, then task_source, then _default', { timeout: 300_000 }, async () => {
  const { caseDir, rowsFile } = caseRows('agent_map', [
    task(0, { task_source: 'travel' }),
    task(1),
    task(2, { agent_ref: ref('old_agent'), task_source: 'travel' }),
  ]);
  const ours = await assertSameCollection(servers, caseDir, {
    rowsFile,
    numRepeats: 1,
    withoutAgentName: true,
    options: { agent_map: { old_agent: agent, travel: SECOND, _default: agent } },
  });
  assert.deepEqual(agentsOf(ours.materializedInputs), [SECOND, agent, agent]);
  assert.deepEqual(agentsOf(ours.rollouts.join('\n')), [SECOND, agent, agent]);
  await assertSameProfile(ours.prefix);
});

test('fan_out runs a row once per listed agent, num_repeats 2 each', { timeout: 300_000 }, async () => {
  const fanned = task(0, { task_source: 'travel' });
  const { caseDir, rowsFile } = caseRows('fan_out', [fanned, task(1), task(2, { task_source: 'travel' }), fanned]);
  const ours = await assertSameCollection(servers, caseDir, {
    rowsFile,
    numRepeats: 2,
    options: { fan_out: { travel: [agent, SECOND] } },
  });
  // Each copy continues its task's rollout indices; the duplicate line continues them again.
  const order = ['0:0', '0:1', '0:2', '0:3', '1:0', '1:1', '2:0', '2:1', '2:2', '2:3'];
  assert.deepEqual(indexOrder(ours.materializedInputs), [...order, '0:4', '0:5', '0:6', '0:7']);
  const both = [agent, agent, SECOND, SECOND];
  assert.deepEqual(agentsOf(ours.materializedInputs), [...both, agent, agent, ...both, ...both]);
  assert.equal(ours.rollouts.length, 14);
  await assertSameProfile(ours.prefix);
});

test(
  'num_repeats as a dict: the dispatched agent, then the row’s own key, then _default',
  { timeout: 300_000 },
  async () => {
    const { caseDir, rowsFile } = caseRows('num_repeats_dict', [
      task(0, { agent_ref: ref('old_agent') }),
      task(1, { agent_ref: ref(agent) }),
      task(2, { agent_ref: ref('old2') }),
    ]);
    const ours = await assertSameCollection(servers, caseDir, {
      rowsFile,
      numRepeats: { [SECOND]: 1, old_agent: 3, old2: 3, _default: 2 },
      withoutAgentName: true,
      options: { agent_map: { old_agent: SECOND, old2: agent } },
    });
    assert.deepEqual(indexOrder(ours.materializedInputs), ['0:0', '1:0', '1:1', '2:0', '2:1', '2:2']);
    const rows = materialized(ours.materializedInputs);
    assert.deepEqual(rows[1]!.agent_ref, ref(agent), 'a row no map entry names keeps its agent_ref as it is');
    await assertSameProfile(ours.prefix);
  },
);
