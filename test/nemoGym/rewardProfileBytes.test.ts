import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeRewardProfile } from '../../gym/rewardProfile';
import { ensureNemoGym, runNemoGymCommand } from '../../scripts/lib/nemoGym';

// The reward profile files against `ng_reward_profile` itself on files chosen for Python's types:
// floats that look integral (`1.0`), ints, bools, a column missing from one rollout (pandas then
// upcasts every max/min to float), a tiny float orjson writes in exponent form, and non-ASCII text.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-profile-bytes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const row = (task: number, rollout: number, extra: string) =>
  `{"responses_create_params":{"input":[{"role":"user","content":"h\u00e9llo"}],"temperature":1.0,"top_p":0.95}${extra},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`;
const materialized = [
  row(0, 0, ',"agent_ref":{"type":"responses_api_agents","name":"b_agent"},"provenance":{"reward":1.0,"n":2}'),
  row(0, 1, ',"agent_ref":{"type":"responses_api_agents","name":"b_agent"},"provenance":{"reward":1.0,"n":2}'),
  row(1, 0, ',"agent_ref":{"type":"responses_api_agents","name":"a_agent"}'),
];
const rollout = (task: number, r: number, reward: string, extra: string, usage: string) =>
  `{"response":{"usage":{${usage}}},"reward":${reward}${extra},"_ng_task_index":${task},"_ng_rollout_index":${r}}`;

const cases: Record<string, string[]> = {
  floats: [
    rollout(0, 0, '1.0', ',"flag":true,"score":3', '"input_tokens":5,"output_tokens":7'),
    rollout(0, 1, '0.0', ',"score":4', '"input_tokens":6,"output_tokens":7'),
    rollout(1, 0, '0.5', ',"score":4', '"input_tokens":6,"output_tokens":1e-6'),
  ],
  ints: [
    rollout(0, 0, '1', ',"score":3', '"input_tokens":5,"output_tokens":7'),
    rollout(0, 1, '0', ',"score":4', '"input_tokens":6,"output_tokens":7'),
    rollout(1, 0, '1', ',"score":4', '"input_tokens":6,"output_tokens":2'),
  ],
};

for (const [name, lines] of Object.entries(cases)) {
  test(`reward profile bytes = ng_reward_profile's (${name})`, { timeout: 300_000 }, async () => {
    const install = ensureNemoGym();
    const materializedPath = path.join(dir, `${name}_materialized_inputs.jsonl`);
    writeFileSync(materializedPath, `${materialized.join('\n')}\n`);
    for (const who of ['ours', 'theirs'])
      writeFileSync(path.join(dir, `${name}_${who}.jsonl`), `${lines.join('\n')}\n`);
    await writeRewardProfile({
      materializedInputsPath: materializedPath,
      rolloutsPath: path.join(dir, `${name}_ours.jsonl`),
    });
    const run = await runNemoGymCommand(
      install,
      'ng_reward_profile',
      [
        `+materialized_inputs_jsonl_fpath=${materializedPath}`,
        `+rollouts_jsonl_fpath=${path.join(dir, `${name}_theirs.jsonl`)}`,
      ],
      dir,
    );
    assert.equal(run.code, 0, run.output.slice(-2000));
    for (const suffix of ['_reward_profiling.jsonl', '_agent_metrics.json']) {
      const ours = readFileSync(path.join(dir, `${name}_ours${suffix}`), 'utf8');
      const theirs = readFileSync(path.join(dir, `${name}_theirs${suffix}`), 'utf8');
      assert.equal(ours, theirs, suffix);
    }
  });
}
