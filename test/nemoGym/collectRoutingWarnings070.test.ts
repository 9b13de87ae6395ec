import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSameCollection } from '../helpers/collect070';
import { type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';
import { baseDirWith, check, removeBaseDirs } from '../helpers/checkCli';

// NeMo Gym 0.7.0's two routing warnings (rollout_collection.py `_preprocess_raw_rows`): agent_map
// (here agent_name, its `_default`) replacing a row's own agent_ref, and a num_repeats key no row
// was looked up by. 0.7.0's ng_collect_rollouts and our collect run the same rows; `pivot-miner
// check` (and `run`'s pre-flight) gives each warning, word for word, as a note. The worker's log
// gets them too (test/activities/stage/materialize.test.ts).

const SEED = 29;
const SECOND = 'second_tool_agent';
const { opened, task, caseRows } = collectCases(SEED, [SECOND], 'pivot-miner-routing-warnings-070-');
let servers: CollectServers;
let agent: string;

before(async () => void ({ servers, agent } = await opened()));
after(removeBaseDirs);

test('an overridden agent_ref and a num_repeats typo: both warn, in the same words', { timeout: 300_000 }, async () => {
  const rows = [task(0, { agent_ref: { name: SECOND } }), task(1), task(2, { agent_ref: { name: agent } })];
  const { caseDir, rowsFile } = caseRows('warnings', rows);
  const numRepeats = { [agent]: 1, [SECOND]: 2, tpyo_agent: 3 };
  const { printed070 } = await assertSameCollection(servers, caseDir, { rowsFile, numRepeats, options: {} });

  const config = {
    name: 'routing_warnings',
    servers: { mode: 'attach', head_url: servers.head.url },
    collect: { input_jsonl: 'data/tasks.jsonl', agent_name: agent, num_repeats: numRepeats },
    local_profile: { model: { url: servers.stack.urls.model, api: 'responses' } },
  };
  const checked = await check(
    baseDirWith(
      config,
      rows.map((r) => JSON.stringify(r)),
    ),
    {},
  );
  assert.equal(checked.code, 0, checked.stderr);
  const notes = checked.stderr
    .split('\n')
    .filter((line) => line.startsWith('note: '))
    .map((line) => line.slice('note: '.length));
  const warnings = notes.filter((n) => n.startsWith('agent_map overrode') || n.startsWith('num_repeats dict'));
  assert.deepEqual(warnings, [
    `agent_map overrode agent_ref values already present in the data: [('${SECOND}', '${agent}')]. Prior to this ` +
      'release, +agent_name only filled rows missing an agent_ref; it now re-routes every row.',
    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): ['tpyo_agent']",
  ]);
  for (const warning of warnings)
    assert.ok(printed070.includes(`UserWarning: ${warning}\n`), `0.7.0 printed: ${warning}`);
});
