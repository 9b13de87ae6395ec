import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { profileCompletionSummary, profileFromData, RewardProfileError } from '../../../gym/rewardProfile';
import { fixturesDir } from '../../helpers/fixtures';

// Profiling rows in memory against NeMo Gym's own test cases (fixtures/gym/reward_profile_cases.json),
// its error messages, and the order of what it writes.

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
    | {
        mode?: undefined;
        group_level: LevelCompare;
        agent_level: LevelCompare;
        completion_summary?: { mode: 'exact' };
      };
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
  assert.ok(
    pyEqual(actual, expected),
    `${label}\nactual:   ${JSON.stringify(actual)}\nexpected: ${JSON.stringify(expected)}`,
  );
}

function checkLevel(actual: Row[], expected: Row[] | null, how: LevelCompare, label: string): void {
  if (how === null || expected === null) return;
  if (how.mode === 'exact_after_clean') {
    // Upstream nulls its W&B histograms before comparing; they are never built here (nothing writes them).
    const clean = (rows: Row[]) =>
      rows.map((row) =>
        Object.fromEntries(
          Object.entries(row).filter(
            ([k]) => !how.drop_keys.includes(k) && !k.startsWith(how.null_out_keys_with_prefix),
          ),
        ),
      );
    assert.ok(
      actual.every((row) => !Object.keys(row).some((k) => k.startsWith(how.null_out_keys_with_prefix))),
      `${label}: histograms built`,
    );
    assertPyEqual(clean(actual), clean(expected), label);
    return;
  }
  const serialized = actual;
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
  assert.throws(
    () => profileFromData(rows, [], false),
    /Missing rollout results for 12 materialized input rows\. Missing rollout keys: \[\(1, 0\), \(2, 0\), .*\(10, 0\)\]\.\n/,
  );
  assert.throws(
    () => profileFromData([row(0, 0), row(0, 0)], [], true),
    new RewardProfileError('Duplicate materialized input row for rollout key (0, 0)'),
  );
  assert.throws(
    () => profileFromData([row(0, 0)], [result(0, 0), result(0, 0)], true),
    new RewardProfileError('Duplicate result row for rollout key (0, 0)'),
  );
  assert.throws(() => profileFromData([{ _ng_task_index: 0 }], [], true), /has no '_ng_rollout_index'/);
  assert.deepEqual(profileFromData([row(0, 0)], [], true), { groupLevel: [], agentLevel: [] });
});

test('group rows follow upstream key order and rollout_infos precedence', () => {
  const rows = [0, 1, 2].map((r) => ({
    _ng_task_index: 3,
    _ng_rollout_index: r,
    responses_create_params: { input: [] },
    agent_ref: { name: 'b' },
  }));
  const results = [
    {
      _ng_task_index: 3,
      _ng_rollout_index: 2,
      response: { usage: { total_tokens: 9, ok: 5 } },
      reward: 1,
      ok: true,
      note: 'x',
    },
    { _ng_task_index: 3, _ng_rollout_index: 0, response: { usage: { total_tokens: 5, ok: 7 } }, reward: 0, ok: false },
  ];
  const { groupLevel, agentLevel } = profileFromData(rows, results, true);
  const g = groupLevel[0]!;
  assert.deepEqual(Object.keys(g), [
    '_ng_task_index',
    'mean/reward',
    'mean/ok',
    'mean/total_tokens',
    'max/reward',
    'max/ok',
    'max/total_tokens',
    'min/reward',
    'min/ok',
    'min/total_tokens',
    'median/reward',
    'median/ok',
    'median/total_tokens',
    'std/reward',
    'std/ok',
    'std/total_tokens',
    'sample',
    'num_rollouts',
    'expected_num_rollouts',
    'missing_num_rollouts',
    'reward_profile_completion_pct',
    'rollout_infos',
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
  assert.deepEqual(
    agentLevel.map((a) => a.agent_ref),
    [{ name: 'alpha' }, { name: 'zeta' }],
  );
  const task1 = groupLevel[1]!;
  assert.equal(task1['std/reward'], Math.SQRT1_2);
  assert.equal(task1['mean/extra'], 3);
  assert.ok(!('std/extra' in task1));
  // A single-rollout group gets std 0.0 for its complete columns only.
  assert.equal(groupLevel[0]!['std/reward'], 0);
  assert.ok(!('mean/extra' in groupLevel[0]!));
});
