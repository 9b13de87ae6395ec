import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  aggregateMetricsPath,
  computeAggregateMetrics,
  entryFor040,
  pythonTruthy,
  stripForAggregateMetrics,
  typedAggregateMetrics,
  VerifyResponses,
} from '../../gym/aggregateMetrics';
import { jsonText } from '../../gym/jsonl';
import { orjsonDumps } from '../../gym/pythonJsonDumps';
import { fixturesDir } from '../helpers/fixtures';
import { runNemoGymPython } from '../helpers/nemoGymPython';

// The default `/aggregate_metrics` computation against NeMo Gym's own (reward_profile.py
// compute_aggregate_metrics, run in the NeMo Gym venv on the same verify responses).

type Row = Record<string, any>;

/** Real rollouts, keyed into tasks of 3, 1 and 2 rollouts, given in shuffled order, with ragged extra fields. */
function verifyResponses(): Row[] {
  const file = path.join(fixturesDir, 'gym/workplace_assistant/example_rollouts.jsonl');
  const rollouts = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Row);
  const keys = [
    [2, 1],
    [0, 0],
    [1, 0],
    [0, 2],
    [0, 1],
    [2, 0],
  ];
  return keys.map(([task, rollout], i) => {
    const r: Row = {
      ...rollouts[i % rollouts.length]!,
      _ng_task_index: task,
      _ng_rollout_index: rollout,
      agent_ref: { name: 'workplace' },
    };
    if (i % 2 === 0) r.partial_credit = i / 7;
    if (i === 3) r.flagged = true;
    if (i === 4) delete r.response;
    return stripForAggregateMetrics(r);
  });
}

test('computeAggregateMetrics matches NeMo Gym compute_aggregate_metrics', { timeout: 120_000 }, async () => {
  const input = verifyResponses();
  const script = [
    'import json, sys',
    'from nemo_gym.reward_profile import compute_aggregate_metrics',
    'print(compute_aggregate_metrics(json.load(sys.stdin)).model_dump_json())',
  ].join('\n');
  const theirs = JSON.parse(await runNemoGymPython(script, JSON.stringify(input))) as Row;
  const ours = JSON.parse(JSON.stringify(computeAggregateMetrics(input))) as Row;
  assert.equal(theirs.group_level_metrics.length, 3);
  // The input exercises ragged columns: a field set once has a mean but no std (NaN is dropped).
  assert.ok(
    'mean/flagged' in theirs.agent_metrics && !('std/flagged' in theirs.agent_metrics),
    JSON.stringify(theirs.agent_metrics),
  );
  assert.deepEqual(ours, theirs);
  // Key order too: NeMo Gym's is pandas' column order, which the file keeps.
  assert.deepEqual(Object.keys(ours.agent_metrics), Object.keys(theirs.agent_metrics));
  assert.deepEqual(Object.keys(ours.group_level_metrics[0]), Object.keys(theirs.group_level_metrics[0]));
});

test('no verify responses give the empty AggregateMetrics', () => {
  assert.deepEqual(computeAggregateMetrics([]), { group_level_metrics: [], agent_metrics: {}, key_metrics: {} });
});

test("the request drops response and responses_create_params, keeping 0.7.0's response metadata last", () => {
  const full = {
    responses_create_params: { input: [] },
    response: { incomplete_details: { reason: 'max_output_tokens' }, output: [1], usage: { input_tokens: 4 } },
    reward: 1,
    _ng_task_index: 0,
  };
  const stripped = stripForAggregateMetrics(full);
  const metadata = { usage: { input_tokens: 4 }, incomplete_details: { reason: 'max_output_tokens' } };
  assert.deepEqual(stripped, { reward: 1, _ng_task_index: 0, response: metadata });
  assert.deepEqual(Object.keys(stripped), ['reward', '_ng_task_index', 'response']);
  assert.deepEqual(Object.keys(stripped.response), ['usage', 'incomplete_details'], "0.7.0's order, not the rollout's");
  // Kept when not None, falsy or not; dropped when None or absent.
  assert.deepEqual(
    stripForAggregateMetrics({ response: { output: [], usage: {}, incomplete_details: null }, reward: 0 }),
    {
      reward: 0,
      response: { usage: {} },
    },
  );
  assert.deepEqual(stripForAggregateMetrics({ response: { usage: null }, reward: 0 }), { reward: 0 });
  assert.deepEqual(stripForAggregateMetrics({ response: null, reward: 0 }), { reward: 0 });
});

test("0.4.0's entry keeps a truthy usage alone, made from 0.7.0's", () => {
  const entry = (response: unknown) => jsonText(stripForAggregateMetrics({ reward: 1.0, response }));
  const cases: Array<[unknown, string]> = [
    [{ usage: { n: 1 }, incomplete_details: { reason: 'x' } }, '{"reward":1,"response":{"usage":{"n":1}}}'],
    [{ usage: {}, incomplete_details: { reason: 'x' } }, '{"reward":1}'],
    [{ incomplete_details: { reason: 'x' } }, '{"reward":1}'],
    [{}, '{"reward":1}'],
  ];
  for (const [response, expected] of cases) assert.equal(entryFor040(entry(response)), expected);
  // Python kinds survive: a float stays a float.
  assert.equal(
    entryFor040('{"reward":1.0,"response":{"usage":{"n":2.0}}}'),
    '{"reward":1.0,"response":{"usage":{"n":2.0}}}',
  );
});

test('pythonTruthy follows Python for JSON values', () => {
  for (const falsy of [undefined, null, false, 0, '', [], {}])
    assert.equal(pythonTruthy(falsy), false, JSON.stringify(falsy));
  for (const truthy of [true, 1, -1, 'x', [0], { a: 0 }])
    assert.equal(pythonTruthy(truthy), true, JSON.stringify(truthy));
});

test('the file sits next to the rollouts as <stem>_aggregate_metrics.json', () => {
  assert.equal(aggregateMetricsPath('/runs/r/rollouts.jsonl'), '/runs/r/rollouts_aggregate_metrics.json');
});

test("typedAggregateMetrics over entries in key order (a task at a time) gives VerifyResponses' typed metrics (tables)", async () => {
  // Kinds matter here: float and int rewards, a ragged column, a bool, usage numbers.
  const lines = verifyResponses()
    .sort((a, b) => a._ng_task_index - b._ng_task_index || a._ng_rollout_index - b._ng_rollout_index)
    .map((vr, i) =>
      JSON.stringify(vr).replace(/"reward":(\d+)(?=[,}])/, i % 2 === 0 ? '"reward":$1.0' : '"reward":$1'),
    );
  async function* entries(): AsyncGenerator<string> {
    yield* lines;
  }
  const streamed = await typedAggregateMetrics(entries);
  const tables = new VerifyResponses();
  for (const line of lines) tables.add(JSON.parse(line) as Row, line);
  const expected = tables.typedMetrics();
  const groups = async (values: AsyncIterable<unknown> | Iterable<unknown>) => {
    const out: string[] = [];
    for await (const g of values) out.push(orjsonDumps(g));
    return out;
  };
  assert.equal(orjsonDumps(streamed.agentMetrics), orjsonDumps(expected.agentMetrics));
  assert.equal(orjsonDumps(streamed.keyMetrics), orjsonDumps(expected.keyMetrics));
  assert.match(orjsonDumps(streamed.agentMetrics), /"max\/reward":1\.0/);
  const streamedGroups = await groups(streamed.groups);
  assert.equal(streamedGroups.length, 3);
  assert.deepEqual(streamedGroups, await groups(expected.groups));
});
