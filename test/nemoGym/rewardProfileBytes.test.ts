import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { formatProfileSummary, writeRewardProfile, type NemoGymVersion } from '../../gym/rewardProfile';
import { ensureNemoGym, runNemoGymCommand } from '../../scripts/lib/nemoGym';

// The reward profile files against `ng_reward_profile` itself, 0.7.0 (the default) and 0.4.0 (with
// nemo_gym_version: 0.4.0), on files chosen for Python's types: floats that look integral (`1.0`),
// ints, bools, a column missing from one rollout (pandas then upcasts every max/min to float), a tiny
// float orjson writes in exponent form, and non-ASCII text. 0.7.0 also gets a fan-out run (two agents
// on the same tasks) with masked samples, in key order and shuffled (our two ways of profiling), and
// rollouts without a `response` object, which 0.7.0 profiles where 0.4.0 refuses them.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-profile-bytes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const row = (task: number, rollout: number, agent: string, extra = '') =>
  `{"responses_create_params":{"input":[{"role":"user","content":"h\u00e9llo ${task}"}],"temperature":1.0,"top_p":0.95},"agent_ref":{"type":"responses_api_agents","name":"${agent}"}${extra},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`;
const materialized = [
  row(0, 0, 'b_agent', ',"provenance":{"reward":1.0,"n":2}'),
  row(0, 1, 'b_agent', ',"provenance":{"reward":1.0,"n":2}'),
  row(1, 0, 'a_agent'),
];
const rollout = (task: number, r: number, reward: string, extra: string, usage: string) =>
  `{"response":{"usage":{${usage}}},"reward":${reward}${extra},"_ng_task_index":${task},"_ng_rollout_index":${r}}`;

/** Tasks 0-2 each run by a_agent (rollouts 0, 1) and b_agent (2, 3); task 3 by c_agent alone. */
const fanOutInputs = [0, 1, 2].flatMap((t) => [
  row(t, 0, 'a_agent'),
  row(t, 1, 'a_agent'),
  row(t, 2, 'b_agent'),
  row(t, 3, 'b_agent'),
]);
fanOutInputs.push(row(3, 0, 'c_agent'), row(3, 1, 'c_agent'));
const fanOutRollouts = [
  rollout(0, 0, '1.0', ',"mask_sample":false,"_ng_attempt_index":0', '"input_tokens":5,"output_tokens":7'),
  rollout(0, 1, '0.0', ',"score":2', '"input_tokens":6,"output_tokens":9'),
  rollout(0, 2, '0.5', ',"score":3', '"input_tokens":6,"output_tokens":11'),
  rollout(0, 3, '1.0', ',"score":1', '"input_tokens":8,"output_tokens":3'),
  rollout(1, 0, '0.25', ',"score":4', '"input_tokens":5,"output_tokens":2'),
  rollout(1, 1, '1.0', ',"score":4', '"input_tokens":4,"output_tokens":7'),
  rollout(1, 2, '0.0', ',"mask_sample":true,"score":9', '"input_tokens":6,"output_tokens":7'),
  rollout(1, 3, '0.75', ',"score":2', '"input_tokens":3,"output_tokens":5'),
  rollout(2, 0, '0.0', ',"score":1', '"input_tokens":9,"output_tokens":4'),
  rollout(2, 1, '1.0', ',"score":2', '"input_tokens":2,"output_tokens":6'),
  rollout(2, 2, '0.0', ',"mask_sample":1', '"input_tokens":6,"output_tokens":8'),
  rollout(2, 3, '0.0', ',"mask_sample":true', '"input_tokens":7,"output_tokens":1'),
  rollout(3, 0, '1.0', ',"mask_sample":true', '"input_tokens":1,"output_tokens":1'),
  rollout(3, 1, '0.0', ',"mask_sample":true', '"input_tokens":1,"output_tokens":2'),
];

interface Case {
  inputs: string[];
  rollouts: string[];
  versions: NemoGymVersion[];
  allowPartialRollouts?: boolean;
}

/** A seeded run of `tasks` × `repeats` with some rollouts missing or masked and varied number kinds. */
function seededRun(tasks: number, repeats: number, seed: number): Pick<Case, 'inputs' | 'rollouts'> {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const inputs: string[] = [];
  const rollouts: string[] = [];
  for (let t = 0; t < tasks; t++) {
    for (let r = 0; r < repeats; r++) {
      inputs.push(row(t, r, t % 7 === 3 ? 'b_agent' : 'a_agent'));
      const roll = next();
      if (roll < 0.05) continue;
      const reward = roll < 0.5 ? '0.0' : (Math.round(next() * 8) / 8).toFixed(3);
      const extra = `${roll > 0.97 ? ',"mask_sample":true' : ''}${next() < 0.8 ? `,"score":${Math.floor(next() * 5)}` : ''}`;
      rollouts.push(
        rollout(t, r, reward, extra, `"input_tokens":${10 + Math.floor(next() * 90)},"output_tokens":${next() * 50}`),
      );
    }
  }
  return { inputs, rollouts };
}

const cases: Record<string, Case> = {
  floats: {
    inputs: materialized,
    versions: ['0.7.0', '0.4.0'],
    rollouts: [
      rollout(0, 0, '1.0', ',"flag":true,"score":3', '"input_tokens":5,"output_tokens":7'),
      rollout(0, 1, '0.0', ',"score":4', '"input_tokens":6,"output_tokens":7'),
      rollout(1, 0, '0.5', ',"score":4', '"input_tokens":6,"output_tokens":1e-6'),
    ],
  },
  ints: {
    inputs: materialized,
    versions: ['0.7.0', '0.4.0'],
    rollouts: [
      rollout(0, 0, '1', ',"score":3', '"input_tokens":5,"output_tokens":7'),
      rollout(0, 1, '0', ',"score":4', '"input_tokens":6,"output_tokens":7'),
      rollout(1, 0, '1', ',"score":4', '"input_tokens":6,"output_tokens":2'),
    ],
  },
  fan_out: { inputs: fanOutInputs, versions: ['0.7.0'], rollouts: fanOutRollouts },
  partial: { ...seededRun(60, 4, 11), versions: ['0.7.0'], allowPartialRollouts: true },
  without_response: {
    inputs: materialized,
    versions: ['0.7.0'],
    rollouts: [
      '{"response":null,"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0}',
      '{"reward":0.0,"score":2,"_ng_task_index":0,"_ng_rollout_index":1}',
      rollout(1, 0, '0.5', '', '"input_tokens":6,"output_tokens":2'),
    ],
  },
  fan_out_shuffled: {
    inputs: fanOutInputs,
    versions: ['0.7.0'],
    rollouts: fanOutRollouts.map((_, i) => fanOutRollouts[(i * 5) % fanOutRollouts.length]!),
  },
};

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Every file in `where` but the rollouts, with its hash. */
function written(where: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(where)
      .filter((f) => f !== 'rollouts.jsonl' && !f.endsWith('.log'))
      .sort()
      .map((f) => [f, sha256(path.join(where, f))]),
  );
}

for (const [name, c] of Object.entries(cases)) {
  for (const version of c.versions) {
    test(`reward profile files = ng_reward_profile ${version}'s (${name})`, { timeout: 600_000 }, async () => {
      const install = ensureNemoGym(version);
      const materializedPath = path.join(dir, `${name}_${version}_materialized_inputs.jsonl`);
      writeFileSync(materializedPath, `${c.inputs.join('\n')}\n`);
      const [ours, theirs] = ['ours', 'theirs'].map((who) => path.join(dir, `${name}_${version}_${who}`));
      for (const where of [ours!, theirs!]) {
        mkdirSync(where);
        writeFileSync(path.join(where, 'rollouts.jsonl'), `${c.rollouts.join('\n')}\n`);
      }
      const out = await writeRewardProfile({
        materializedInputsPath: materializedPath,
        rolloutsPath: path.join(ours!, 'rollouts.jsonl'),
        nemoGymVersion: version,
        allowPartialRollouts: c.allowPartialRollouts ?? false,
      });
      const run = await runNemoGymCommand(
        install,
        'ng_reward_profile',
        [
          `+materialized_inputs_jsonl_fpath=${materializedPath}`,
          `+rollouts_jsonl_fpath=${theirs}/rollouts.jsonl`,
          ...(c.allowPartialRollouts ? ['++allow_partial_rollouts=True'] : []),
        ],
        dir,
      );
      assert.equal(run.code, 0, run.output.slice(-2000));
      const expected = written(theirs!);
      const files = ['rollouts_agent_metrics.json', 'rollouts_reward_profiling.jsonl'];
      if (version === '0.7.0') files.push('rollouts_repeat_level_metrics.json');
      assert.deepEqual(Object.keys(expected), files.sort());
      for (const file of Object.keys(expected)) {
        const [a, b] = [ours!, theirs!].map((where) => readFileSync(path.join(where, file), 'utf8'));
        assert.equal(a, b, file);
      }
      assert.deepEqual(written(ours!), expected);
      // The counts it prints (completion per task, or per (task, agent) under fan-out; masked rows).
      const counts = (text: string) =>
        text.split('\n').filter((l) => /^(Reward profile completion|Input rows|Masked)/.test(l));
      assert.deepEqual(counts(formatProfileSummary(out)), counts(run.output));
    });
  }
}
