import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { jsonLine, readJsonl } from '../../gym/jsonl';
import { JsonlError } from '../../gym/errors';
import { materializeOptionsSchema, materializeRows } from '../../gym/materialize';
import {
  formatProfileSummary,
  prepareForSerialization,
  profileCompletionSummary,
  profileFromData,
  RewardProfileError,
  writeRewardProfile,
} from '../../gym/rewardProfile';
import { histogram, pairwiseSum } from '../../gym/rewardProfile/stats';
import { fixturesDir } from '../fixtures';

type Row = Record<string, unknown>;

interface SubsetCompare {
  mode: 'subset_keys';
  rows: 'first_row_only' | 'all_rows_in_order';
  length_must_match?: boolean;
  keys: string[];
}
interface CleanCompare {
  mode: 'exact_after_clean';
  drop_keys: string[];
  null_out_keys_with_prefix: string;
}
type LevelCompare = SubsetCompare | CleanCompare | null;

interface ProfileCase {
  name: string;
  materialized_inputs: Row[];
  rollouts: Row[];
  allow_partial_rollouts: boolean;
  expected_group_level: Row[] | null;
  expected_agent_level: Row[] | null;
  expected_error_substring: string | null;
  expected_completion_summary: Row | null;
  compare:
    | { mode: 'raises'; match_regex: string }
    | { mode: 'no_error_only' }
    | { mode?: undefined; group_level: LevelCompare; agent_level: LevelCompare; completion_summary?: { mode: 'exact' } };
}

/** Python `==` on JSON values: dicts ignore key order, and True == 1, False == 0, 1 == 1.0. */
function pyEqual(a: unknown, b: unknown): boolean {
  const num = (v: unknown): unknown => (typeof v === 'boolean' ? Number(v) : v);
  if (typeof num(a) === 'number' && typeof num(b) === 'number') return num(a) === num(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEqual(x, b[i]));
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && pyEqual((a as Row)[k], (b as Row)[k]));
  }
  return a === b;
}

function assertPyEqual(actual: unknown, expected: unknown, label: string): void {
  assert.ok(pyEqual(actual, expected), `${label}\nactual:   ${JSON.stringify(actual)}\nexpected: ${JSON.stringify(expected)}`);
}

function checkLevel(actual: Row[], expected: Row[] | null, how: LevelCompare, label: string): void {
  if (how === null || expected === null) return;
  if (how.mode === 'exact_after_clean') {
    const cleaned = actual.map((row) =>
      Object.fromEntries(
        Object.entries(row)
          .filter(([k]) => !how.drop_keys.includes(k))
          .map(([k, v]) => [k, k.startsWith(how.null_out_keys_with_prefix) ? null : v]),
      ),
    );
    assertPyEqual(cleaned, expected, label);
    return;
  }
  const serialized = prepareForSerialization(actual) as Row[];
  const project = (row: Row): Row => Object.fromEntries(how.keys.map((k) => [k, row[k]]));
  if (how.rows === 'first_row_only') {
    assertPyEqual(project(serialized[0]!), project(expected[0]!), label);
  } else {
    if (how.length_must_match) assert.equal(serialized.length, expected.length, `${label}: row count`);
    assertPyEqual(serialized.map(project), expected.map(project), label);
  }
}

async function loadCases(): Promise<ProfileCase[]> {
  return JSON.parse(await readFile(path.join(fixturesDir, 'gym/reward_profile_cases.json'), 'utf8')) as ProfileCase[];
}

test('every NeMo Gym reward profile case passes', async () => {
  const cases = await loadCases();
  assert.equal(cases.length, 7);
  let passed = 0;
  for (const c of cases) {
    const run = (): ReturnType<typeof profileFromData> =>
      profileFromData(c.materialized_inputs, c.rollouts, c.allow_partial_rollouts);
    if (c.compare.mode === 'raises') {
      assert.throws(run, (err: unknown) => {
        assert.ok(err instanceof RewardProfileError, c.name);
        assert.match(err.message, new RegExp(c.compare.mode === 'raises' ? c.compare.match_regex : ''));
        assert.ok(err.message.includes(c.expected_error_substring!), c.name);
        return true;
      });
    } else if (c.compare.mode === 'no_error_only') {
      run();
    } else {
      const { groupLevel, agentLevel } = run();
      checkLevel(groupLevel, c.expected_group_level, c.compare.group_level, `${c.name} group level`);
      checkLevel(agentLevel, c.expected_agent_level, c.compare.agent_level, `${c.name} agent level`);
      if (c.compare.completion_summary) {
        assert.deepEqual(profileCompletionSummary(c.materialized_inputs, c.rollouts), c.expected_completion_summary);
      }
    }
    passed++;
  }
  console.log(`reward profile cases: ${passed}/${cases.length}`);
  assert.equal(passed, 7);
});

test('error messages are NeMo Gym wording, with keys as sorted Python tuples', async () => {
  const cases = await loadCases();
  const strict = cases.find((c) => c.name === 'test_profile_from_data_missing_rollouts_requires_partial_flag')!;
  assert.throws(
    () => profileFromData(strict.materialized_inputs, strict.rollouts, false),
    new RewardProfileError(
      'Materialized input rows and rollout results do not have matching rollout keys. Missing rollout results for 1 materialized input rows. Missing rollout keys: [(0, 1)].\n\nUse ++allow_partial_rollouts=True to profile completed rollouts from a partial collection.',
    ),
  );
  const extra = cases.find((c) => c.name === 'test_profile_from_data_allow_partial_rejects_extra_rollout_rows')!;
  assert.throws(
    () => profileFromData(extra.materialized_inputs, extra.rollouts, true),
    new RewardProfileError(
      'Rollout results contain rows with no matching materialized input rows. Found 1 extra rollout rows. Extra rollout keys: [(1, 0)]',
    ),
  );
  const row = (t: number, r: number): Row => ({ _ng_task_index: t, _ng_rollout_index: r, agent_ref: { name: 'a' } });
  const result = (t: number, r: number): Row => ({ _ng_task_index: t, _ng_rollout_index: r, response: {}, reward: 1 });
  const rows = Array.from({ length: 12 }, (_, i) => row(12 - i, 0));
  assert.throws(() => profileFromData(rows, [], false), /Missing rollout results for 12 materialized input rows\. Missing rollout keys: \[\(1, 0\), \(2, 0\), .*\(10, 0\)\]\.\n/);
  assert.throws(() => profileFromData([row(0, 0), row(0, 0)], [], true), new RewardProfileError('Duplicate materialized input row for rollout key (0, 0)'));
  assert.throws(
    () => profileFromData([row(0, 0)], [result(0, 0), result(0, 0)], true),
    new RewardProfileError('Duplicate result row for rollout key (0, 0)'),
  );
  assert.throws(() => profileFromData([{ _ng_task_index: 0 }], [], true), /has no '_ng_rollout_index'/);
  assert.deepEqual(profileFromData([row(0, 0)], [], true), { groupLevel: [], agentLevel: [] });
});

test('group rows follow upstream key order and rollout_infos precedence', () => {
  const rows = [0, 1, 2].map((r) => ({ _ng_task_index: 3, _ng_rollout_index: r, responses_create_params: { input: [] }, agent_ref: { name: 'b' } }));
  const results = [
    { _ng_task_index: 3, _ng_rollout_index: 2, response: { usage: { total_tokens: 9, ok: 5 } }, reward: 1, ok: true, note: 'x' },
    { _ng_task_index: 3, _ng_rollout_index: 0, response: { usage: { total_tokens: 5, ok: 7 } }, reward: 0, ok: false },
  ];
  const { groupLevel, agentLevel } = profileFromData(rows, results, true);
  const g = groupLevel[0]!;
  assert.deepEqual(Object.keys(g), [
    '_ng_task_index',
    'mean/reward', 'mean/ok', 'mean/total_tokens',
    'max/reward', 'max/ok', 'max/total_tokens',
    'min/reward', 'min/ok', 'min/total_tokens',
    'median/reward', 'median/ok', 'median/total_tokens',
    'std/reward', 'std/ok', 'std/total_tokens',
    'histogram/reward', 'histogram/ok', 'histogram/total_tokens',
    'sample', 'num_rollouts', 'expected_num_rollouts', 'missing_num_rollouts', 'reward_profile_completion_pct', 'rollout_infos',
  ]);
  // Stats: usage wins over the top-level `ok` (7 and 5); rollout_infos: top-level wins (0 and 1).
  assert.equal(g['mean/ok'], 6);
  assert.deepEqual(g.rollout_infos, [
    { rollout_id: '3:0', _ng_task_index: 3, _ng_rollout_index: 0, reward: 0, total_tokens: 5, ok: 0 },
    { rollout_id: '3:2', _ng_task_index: 3, _ng_rollout_index: 2, reward: 1, total_tokens: 9, ok: 1 },
  ]);
  assert.deepEqual(g.sample, { responses_create_params: { input: [] }, agent_ref: { name: 'b' } });
  assert.equal(g.expected_num_rollouts, 3);
  assert.equal(g.missing_num_rollouts, 1);
  assert.equal(g.reward_profile_completion_pct, (100 * 2) / 3);
  assert.equal(Object.keys(agentLevel[0]!).at(-1), 'agent_ref');
  assert.deepEqual(agentLevel[0]!.agent_ref, { name: 'b' });
  assert.ok(!Object.keys(prepareForSerialization(groupLevel)[0]!).some((k) => k.startsWith('histogram')));
});

test('agents are grouped and sorted by name; a column missing from one rollout keeps its std out', () => {
  const rows = [
    { _ng_task_index: 0, _ng_rollout_index: 0, agent_ref: { name: 'zeta' } },
    { _ng_task_index: 1, _ng_rollout_index: 0, agent_ref: { name: 'alpha' } },
    { _ng_task_index: 1, _ng_rollout_index: 1, agent_ref: { name: 'alpha' } },
  ];
  const results = [
    { _ng_task_index: 0, _ng_rollout_index: 0, response: { usage: null }, reward: 0.25 },
    { _ng_task_index: 1, _ng_rollout_index: 0, response: {}, reward: 1, extra: 3 },
    { _ng_task_index: 1, _ng_rollout_index: 1, response: {}, reward: 0 },
  ];
  const { groupLevel, agentLevel } = profileFromData(rows, results, false);
  assert.deepEqual(agentLevel.map((a) => a.agent_ref), [{ name: 'alpha' }, { name: 'zeta' }]);
  const task1 = groupLevel[1]!;
  assert.equal(task1['std/reward'], Math.SQRT1_2);
  assert.equal(task1['mean/extra'], 3);
  assert.ok(!('std/extra' in task1));
  // A single-rollout group gets std 0.0 for its complete columns only.
  assert.equal(groupLevel[0]!['std/reward'], 0);
  assert.ok(!('mean/extra' in groupLevel[0]!));
});

test('stats reproduce numpy/pandas to the last bit', () => {
  // Reference values computed with numpy 2.4 / pandas 3.1 (pairwise summation differs from naive here).
  const a = Array.from({ length: 299 }, (_, i) => 0.1 * (i + 1) + 0.01);
  assert.equal(pairwiseSum(a), 4487.99);
  const b = Array.from({ length: 19 }, (_, i) => (i % 3 === 0 ? undefined : 0.1 * (i + 1) + 0.01));
  const rows = b.map((_, i) => ({ _ng_task_index: 0, _ng_rollout_index: i, agent_ref: { name: 'a' } }));
  const results = b.map((v, i) => ({ _ng_task_index: 0, _ng_rollout_index: i, response: {}, ...(v === undefined ? {} : { v }), reward: 1 }));
  const g = profileFromData(rows, results, false).groupLevel[0]!;
  assert.equal(g['mean/v'], 1.0100000000000002);
  assert.equal(g['std/v'], 0.5376717484589544);
  assert.equal(g['median/v'], 1.01);
  assert.deepEqual(histogram([1, 2, 2, 3.5, 10])?.histogram, [1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, ...Array(45).fill(0), 1]);
});

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reward-profile-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Three tasks × 2 repeats materialized from workplace_assistant inputs, answered by its real rollouts. */
async function buildRun(name: string): Promise<{ inputs: string; rollouts: string; materialized: Row[]; results: Row[] }> {
  const source = path.join(fixturesDir, 'gym/workplace_assistant/example_rollouts.jsonl');
  const fixtureRollouts: Row[] = [];
  for await (const r of readJsonl(source)) fixtureRollouts.push(r.value as Row);
  const taskRows = fixtureRollouts.slice(0, 3).map((r, i) => ({ value: { responses_create_params: r.responses_create_params, task: i }, line: i + 1, byteOffset: 0, byteLength: 0 }));
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
  const out = await writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts });
  assert.equal(out.rewardProfilingPath, path.join(dir, 'wa_reward_profiling.jsonl'));
  assert.equal(out.agentMetricsPath, path.join(dir, 'wa_agent_metrics.json'));

  const lines = (await readFile(out.rewardProfilingPath, 'utf8')).split('\n');
  assert.equal(lines.pop(), '');
  const written = lines.map((l) => JSON.parse(l) as Row);
  // The file (samples read back by offset) equals the in-memory profile of the full rows.
  assert.deepEqual(written, JSON.parse(JSON.stringify(prepareForSerialization(profileFromData(run.materialized, run.results, false).groupLevel))));
  // What is returned is the same stats with the sample reduced to its agent_ref.
  assert.deepEqual(
    out.groupLevel.map(({ sample: _sample, ...stats }) => stats),
    JSON.parse(JSON.stringify(written.map(({ sample: _sample, ...stats }) => stats))),
  );
  assert.deepEqual(written.map((g) => g._ng_task_index), [0, 1, 2]);
  assert.deepEqual(written.map((g) => g['mean/reward']), [0.5, 1, 0.5]);
  assert.deepEqual(written.map((g) => g['std/reward']), [Math.SQRT1_2, 0, Math.SQRT1_2]);
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
      `Reward profiling outputs: ${out.rewardProfilingPath}`,
      `Agent-level metrics: ${out.agentMetricsPath}`,
    ].join('\n'),
  );
});

test('writeRewardProfile is strict by default and profiles partial collections on request', async () => {
  const run = await buildRun('partial');
  const kept = run.results.filter((r) => !(r._ng_task_index === 1 || (r._ng_task_index === 2 && r._ng_rollout_index === 0)));
  await writeFile(run.rollouts, kept.map(jsonLine).join(''));
  await assert.rejects(
    writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts }),
    /Missing rollout keys: \[\(1, 0\), \(1, 1\), \(2, 0\)\]\.\n\nUse \+\+allow_partial_rollouts=True/,
  );
  const out = await writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts, allowPartialRollouts: true });
  assert.deepEqual(out.groupLevel.map((g) => [g._ng_task_index, g.num_rollouts, g.missing_num_rollouts]), [
    [0, 2, 0],
    [2, 1, 1],
  ]);
  // The sample written is the lowest *completed* rollout's row.
  const writtenRows = (await readFile(out.rewardProfilingPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Row);
  assert.deepEqual(writtenRows[1]!.sample, { ...(() => {
    const { _ng_task_index: _t, _ng_rollout_index: _r, ...rest } = run.materialized[5]!;
    return rest;
  })() });
  assert.match(formatProfileSummary(out), /Reward profile completion: 3\/6 rollout rows \(50\.00%\)\nInput rows: 3 total; 1 complete; 1 partial; 1 without rollouts dropped from output\./);
});

test('writeRewardProfile names file and line for rows it cannot key', async () => {
  const run = await buildRun('badline');
  const text = await readFile(run.rollouts, 'utf8');
  await writeFile(run.rollouts, text.replace(/"_ng_rollout_index":\d+/, '"_ng_rollout_index":"x"'));
  await assert.rejects(writeRewardProfile({ materializedInputsPath: run.inputs, rolloutsPath: run.rollouts }), (err: unknown) => {
    assert.ok(err instanceof JsonlError);
    assert.equal(err.file, run.rollouts);
    assert.equal(err.line, 1);
    assert.match(err.reason, /_ng_rollout_index/);
    return true;
  });
});
