import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { jsonLine, readJsonl } from '../../../gym/jsonl';
import { JsonlError } from '../../../gym/errors';
import { materializeOptionsSchema, materializeRows } from '../../../gym/materialize';
import {
  formatProfileSummary,
  profileFromData,
  writeRewardProfile,
  type GroupLevelMetrics,
} from '../../../gym/rewardProfile';
import { fixturesDir } from '../../helpers/fixtures';

// `ng_reward_profile` on files: what is written next to the rollouts, what is handed back, and the
// errors that name a file and line.

type Row = Record<string, unknown>;

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reward-profile-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Three tasks × 2 repeats materialized from workplace_assistant inputs, answered by its real rollouts. */
async function buildRun(
  name: string,
): Promise<{ inputs: string; rollouts: string; materialized: Row[]; results: Row[] }> {
  const source = path.join(fixturesDir, 'gym/workplace_assistant/example_rollouts.jsonl');
  const fixtureRollouts: Row[] = [];
  for await (const r of readJsonl(source)) fixtureRollouts.push(r.value as Row);
  const taskRows = fixtureRollouts.slice(0, 3).map((r, i) => ({
    value: { responses_create_params: r.responses_create_params, task: i },
    line: i + 1,
    byteOffset: 0,
    byteLength: 0,
  }));
  const materialized: Row[] = [];
  const opts = materializeOptionsSchema.parse({ agent_name: 'workplace_assistant_simple_agent', num_repeats: 2 });
  for await (const row of materializeRows(taskRows, opts, 'tasks.jsonl')) materialized.push(row);
  const results = materialized.map((row, i) => {
    const { responses_create_params: _, ...rollout } = fixtureRollouts[i % 5]!;
    return { ...rollout, _ng_task_index: row._ng_task_index, _ng_rollout_index: row._ng_rollout_index };
  });
  const inputs = path.join(dir, `${name}_materialized_inputs.jsonl`);
  const rollouts = path.join(dir, `${name}.jsonl`);
  await writeFile(inputs, materialized.map(jsonLine).join(''));
  // Results arrive in completion order, not materialized order.
  await writeFile(rollouts, [...results].reverse().map(jsonLine).join(''));
  return { inputs, rollouts, materialized, results };
}

test('writeRewardProfile writes NeMo Gym files next to the rollouts', async () => {
  const run = await buildRun('wa');
  const handed: GroupLevelMetrics[] = [];
  const out = await writeRewardProfile({
    materializedInputsPath: run.inputs,
    rolloutsPath: run.rollouts,
    onGroup: (row) => handed.push(row),
  });
  assert.equal(out.rewardProfilingPath, path.join(dir, 'wa_reward_profiling.jsonl'));
  assert.equal(out.agentMetricsPath, path.join(dir, 'wa_agent_metrics.json'));

  const lines = (await readFile(out.rewardProfilingPath, 'utf8')).split('\n');
  assert.equal(lines.pop(), '');
  const written = lines.map((l) => JSON.parse(l) as Row);
  // The file (samples read back by offset) equals the in-memory profile of the full rows.
  assert.deepEqual(
    written,
    JSON.parse(JSON.stringify(profileFromData(run.materialized, run.results, false).groupLevel)),
  );
  // What is handed to onGroup is the same stats without the sample.
  assert.equal(out.tasks, 3);
  assert.deepEqual(handed, JSON.parse(JSON.stringify(written.map(({ sample: _sample, ...stats }) => stats))));
  assert.deepEqual(
    written.map((g) => g._ng_task_index),
    [0, 1, 2],
  );
  assert.deepEqual(
    written.map((g) => g['mean/reward']),
    [0.5, 1, 0.5],
  );
  assert.deepEqual(
    written.map((g) => g['std/reward']),
    [Math.SQRT1_2, 0, Math.SQRT1_2],
  );
  assert.ok(written.every((g) => !Object.keys(g).some((k) => k.startsWith('histogram'))));
  assert.ok(written.every((g) => typeof g['mean/total_tokens'] === 'number'));
  const { _ng_task_index: _t, _ng_rollout_index: _r, ...sample0 } = run.materialized[0]!;
  assert.deepEqual(written[0]!.sample, sample0);
  assert.deepEqual(
    (written[2]!.rollout_infos as Row[]).map((i) => [i.rollout_id, i.reward]),
    [
      ['2:0', 1],
      ['2:1', 0],
    ],
  );

  const agentText = await readFile(out.agentMetricsPath, 'utf8');
  const agents = JSON.parse(agentText) as Row[];
  assert.equal(agents.length, 1);
  assert.deepEqual(agents[0]!.agent_ref, { name: 'workplace_assistant_simple_agent' });
  assert.equal(agents[0]!['mean/reward'], 4 / 6);
  assert.ok(!agentText.includes('histogram'));

  assert.deepEqual(out.summary, {
    expected_rollout_rows: 6,
    completed_rollout_rows: 6,
    missing_rollout_rows: 0,
    extra_rollout_rows: 0,
    reward_profile_completion_pct: 100,
    total_input_rows: 3,
    complete_input_rows: 3,
    partial_input_rows: 0,
    missing_input_rows: 0,
  });
  assert.equal(
    formatProfileSummary(out),
    [
      'Profiling outputs:',
      'Reward profile completion: 6/6 rollout rows (100.00%)',
      'Input rows: 3 total; 3 complete; 0 partial; 0 without rollouts dropped from output.',
      'Masked from quality metrics: 0 rollout rows (kept in completion accounting above).',
      `Reward profiling outputs: ${out.rewardProfilingPath}`,
      `Agent-level metrics: ${out.agentMetricsPath}`,
      `Repeat-level metrics: ${path.join(dir, 'wa_repeat_level_metrics.json')}`,
    ].join('\n'),
  );
  // 0.4.0's summary, for nemo_gym_version: 0.4.0, has neither 0.7.0 line.
  const { repeatLevelMetricsPath: _repeats, masked: _masked, ...gym040 } = out;
  assert.doesNotMatch(formatProfileSummary(gym040), /Masked|Repeat-level/);
});

test('writeRewardProfile is strict by default and profiles partial collections on request', async () => {
  const run = await buildRun('partial');
  const kept = run.results.filter(
    (r) => !(r._ng_task_index === 1 || (r._ng_task_index === 2 && r._ng_rollout_index === 0)),
  );
  await writeFile(run.rollouts, kept.map(jsonLine).join(''));
  await assert.rejects(
    writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts }),
    /Missing rollout keys: \[\(1, 0\), \(1, 1\), \(2, 0\)\]\.\n\nUse \+\+allow_partial_rollouts=True/,
  );
  const handed: GroupLevelMetrics[] = [];
  const out = await writeRewardProfile({
    materializedInputsPath: run.inputs,
    rolloutsPath: run.rollouts,
    allowPartialRollouts: true,
    onGroup: (row) => handed.push(row),
  });
  assert.deepEqual(
    handed.map((g) => [g._ng_task_index, g.num_rollouts, g.missing_num_rollouts]),
    [
      [0, 2, 0],
      [2, 1, 1],
    ],
  );
  // The sample written is the lowest *completed* rollout's row.
  const writtenRows = (await readFile(out.rewardProfilingPath, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  assert.deepEqual(writtenRows[1]!.sample, {
    ...(() => {
      const { _ng_task_index: _t, _ng_rollout_index: _r, ...rest } = run.materialized[5]!;
      return rest;
    })(),
  });
  assert.match(
    formatProfileSummary(out),
    /Reward profile completion: 3\/6 rollout rows \(50\.00%\)\nInput rows: 3 total; 1 complete; 1 partial; 1 without rollouts dropped from output\./,
  );
});

test('writeRewardProfile names file and line for rows it cannot key', async () => {
  const run = await buildRun('badline');
  const text = await readFile(run.rollouts, 'utf8');
  await writeFile(run.rollouts, text.replace(/"_ng_rollout_index":\d+/, '"_ng_rollout_index":"x"'));
  await assert.rejects(
    writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts }),
    (err: unknown) => {
      assert.ok(err instanceof JsonlError);
      assert.equal(err.file, run.rollouts);
      assert.equal(err.line, 1);
      assert.match(err.reason, /_ng_rollout_index/);
      return true;
    },
  );
});
