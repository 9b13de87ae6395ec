import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { publishPivotDataset } from '../../gym/publish';
import { validatePivotDataset } from '../../gym/validator';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';
import { prepareTrainData } from '../helpers/nemoGymPython';
import { readJsonlSync } from '../helpers/jsonl';

// Published function_call_batch pivots, shaped like NeMo Gym's parallel_example.jsonl, through NeMo
// Gym 0.4.0's ng_prepare_data. It reads rows by responses_create_params and never looks at
// expected_action, so it takes them; 0.4.0's resources server cannot score them (0.5.1 can).

const workDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-batch-gym-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

const TOOL = { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true };
const CITIES = [
  ['Paris', 'Tokyo', 'Cairo'],
  ['Oslo', 'Lima', 'Rome'],
];

test('ng_prepare_data (NeMo Gym 0.4.0) prepares published batch pivots', { timeout: 300_000 }, async () => {
  const candidatesPath = path.join(workDir, 'candidates.jsonl');
  const localProfilePath = path.join(workDir, 'local_profile_reward_profiling.jsonl');
  const candidates = CITIES.map((cities, task) => ({
    responses_create_params: {
      input: [{ role: 'user', content: `What's the weather in ${cities.join(', ')}?`, type: 'message' }],
      tools: [TOOL],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    },
    expected_action: {
      type: 'function_call_batch',
      calls: cities.map((city) => ({
        type: 'function_call',
        name: 'get_weather',
        arguments: JSON.stringify({ city }),
      })),
    },
    agent_ref: { type: 'responses_api_agents', name: 'source_agent' },
    provenance: { uuid: `00000000-0000-5000-8000-00000000000${task}`, source_reward: 1.0 },
  }));
  writeFileSync(candidatesPath, candidates.map((c) => `${JSON.stringify(c)}\n`).join(''));
  writeFileSync(
    localProfilePath,
    CITIES.map(
      (_, task) =>
        `${JSON.stringify({ _ng_task_index: task, 'mean/reward': 0.5, 'min/reward': 0.0, 'max/reward': 1.0, num_rollouts: 4, expected_num_rollouts: 4, missing_num_rollouts: 0 })}\n`,
    ).join(''),
  );
  const published = await publishPivotDataset({
    candidatesPath,
    localProfilePath,
    outDir: path.join(workDir, 'dataset'),
    agentName: 'parallel_pivot_agent',
    datasetName: 'parallel_pivots',
  });
  assert.equal(published.counts.published, CITIES.length);
  const validation = await validatePivotDataset({
    path: published.pivotsPath,
    agentRef: 'parallel_pivot_agent',
    batchActions: true,
    gymConfigPath: published.gymConfigPath,
  });
  assert.equal(validation.exitCode, 0, validation.stderr);

  const install = ensureNemoGym();
  const out = path.join(workDir, 'prepared');
  const prepared = await prepareTrainData(install, published.gymConfigPath, out, workDir);
  assert.equal(prepared.code, 0, prepared.output.slice(-3000));
  const rows = readJsonlSync<Record<string, any>>(path.join(out, 'train.jsonl'));
  assert.deepEqual(
    rows.map((r) => r.expected_action.calls.length),
    CITIES.map((c) => c.length),
  );
  assert.doesNotMatch(prepared.output, /conflict/i);
  assert.ok(readFileSync(published.pivotsPath, 'utf8').includes('"function_call_batch"'));
});
