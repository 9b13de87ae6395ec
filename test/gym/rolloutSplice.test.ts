import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rolloutDigest } from '../../gym/aggregateMetrics';
import { jsonText } from '../../gym/jsonl';
import { parseKinded, pickEntries, withEntries, type JsonDict } from '../../gym/kindedJson';
import { materializedRowKeys, splicedRollout, splicedVerdict, type RowKeys } from '../../gym/rolloutSplice';
import { fixtureRollouts } from './rolloutFixtures';

// The splice must write what the decoding path writes (itself checked against ng_collect_rollouts
// in test/nemoGym/collectBytes.test.ts): the same rollout line and the same digest.

const ROW_KEYS = ['_ng_task_index', '_ng_rollout_index', 'agent_ref'];

/** The decoding path: the answer decoded, keyed from the row's line, encoded; and its digest. */
function decoded(answer: string, rowLine: string): { line: string; digest: string | null } {
  const keyed = withEntries(
    parseKinded(answer).kinded as JsonDict,
    pickEntries(parseKinded(rowLine).kinded as JsonDict, ROW_KEYS),
  );
  return { line: jsonText(keyed), digest: rolloutDigest(keyed) };
}

/** Fixture rollouts without the row's keys: what an agent answers, in orjson's form. */
function answers(): string[] {
  return fixtureRollouts().map((line) => {
    const value = parseKinded(line).kinded as JsonDict;
    const kept = (value instanceof Map ? [...value] : Object.entries(value)).filter(([k]) => !ROW_KEYS.includes(k));
    return jsonText(value instanceof Map ? new Map(kept) : Object.fromEntries(kept));
  });
}

const ROWS = [
  '{"responses_create_params":{"input":"hi","temperature":1.0},"agent_ref":{"name":"alpha"},"_ng_task_index":3,"_ng_rollout_index":7}',
  '{"agent_ref":{"type":"responses_api_agents","name":"beta","weight":1.0,"10":"x"},"responses_create_params":{"input":"hi"},"_ng_task_index":0,"_ng_rollout_index":0}',
];

test("fixture answers spliced give the decoding path's line and digest", () => {
  const all = answers();
  assert.ok(all.length >= 30);
  for (const rowLine of ROWS) {
    const keys = materializedRowKeys(rowLine)!;
    assert.ok(keys);
    for (const answer of all) {
      const spliced = splicedRollout(answer, keys);
      assert.ok(spliced, answer.slice(0, 120));
      assert.deepEqual(spliced, decoded(answer, rowLine));
    }
  }
});

test('a row line gives its key, agent and entries as written', () => {
  assert.deepEqual(materializedRowKeys(ROWS[1]!), {
    task: 0,
    rollout: 0,
    agentName: 'beta',
    entriesText:
      '"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"type":"responses_api_agents","name":"beta","weight":1.0,"10":"x"}',
  } satisfies RowKeys);
  assert.equal(materializedRowKeys('{"responses_create_params":{"input":"hi"}}'), undefined);
  assert.equal(materializedRowKeys('{"agent_ref": {"name":"a"},"_ng_task_index":0,"_ng_rollout_index":0}'), undefined);
  assert.equal(materializedRowKeys('{"agent_ref":{"name":1},"_ng_task_index":0,"_ng_rollout_index":0}'), undefined);
});

test('usage and incomplete_details are kept in the digest when not null, and stripped fields never are', () => {
  const keys = materializedRowKeys(ROWS[0]!)!;
  const values = ['null', 'false', '0', '0.0', '-0.0', '""', '[]', '{}', '{"input_tokens":3}', '1', '"x"', '[0]'];
  for (const usage of values) {
    for (const details of ['null', '{"reason":"max_output_tokens"}', usage]) {
      // incomplete_details before usage in the answer, after it in the digest, as 0.7.0 assigns them.
      const response = `{"id":"r","incomplete_details":${details},"usage":${usage}}`;
      const answer = `{"responses_create_params":{"input":"x"},"response":${response},"reward":1.0,"ng_trajectory":[1],"extra":{"a":0.5}}`;
      const spliced = splicedRollout(answer, keys);
      assert.deepEqual(spliced, decoded(answer, ROWS[0]!), `${usage} ${details}`);
      assert.equal(spliced!.digest.includes('"incomplete_details"'), details !== 'null', details);
    }
  }
  assert.deepEqual(splicedRollout('{"response":{}}', keys), decoded('{"response":{}}', ROWS[0]!));
});

test("answers that report a failure, carry the row's keys, lack a response object or are in another form are left to decoding", () => {
  const keys = materializedRowKeys(ROWS[0]!)!;
  const left = [
    '{"response":{},"_ng_failure_class":"x"}',
    '{"response":{"id":"r"},"_ng_no_persist":false}',
    '{"response":{"id":"r"},"_ng_failure_terminal":true}',
    '{"response":{"id":"r"},"agent_ref":{"name":"other"}}',
    '{"response":{"id":"r"},"_ng_task_index":9}',
    '{"response":"text"}',
    '{"reward":1.0}',
    '{"response":{"id":"r"},"reward":1.00}',
    '{"response": {"id":"r"}}',
  ];
  for (const answer of left) assert.equal(splicedRollout(answer, keys), undefined, answer);
});

test('an answer holding a key an option decides on is left to be decoded', () => {
  const keys = materializedRowKeys(ROWS[0]!)!;
  const answer = '{"response":{"id":"r"},"invalid_judge_response":true}';
  assert.notEqual(splicedRollout(answer, keys), undefined, 'spliced when no option looks at the key');
  assert.equal(splicedRollout(answer, keys, new Set(['invalid_judge_response'])), undefined);
});

const VERDICT = ['response', 'reward', 'category'];

/** The single-step path: the row decoded, the verdict's entries assigned, encoded; and its digest. */
function decodedVerdict(rowLine: string, verdict: string): { line: string; digest: string | null } {
  const result = withEntries(parseKinded(rowLine).kinded as JsonDict, parseKinded(verdict).kinded as JsonDict);
  return { line: jsonText(result), digest: rolloutDigest(result) };
}

test("a single-step verdict spliced on a row gives the decoding path's line and digest", () => {
  const usages = ['null', '{}', '0', '{"input_tokens":3,"output_tokens":1.5}'];
  for (const rowLine of ROWS)
    for (const usage of usages) {
      const verdict = `{"response":{"id":"r","output":[{"type":"message"}],"usage":${usage}},"reward":1.0,"category":"match"}`;
      assert.deepEqual(splicedVerdict(rowLine, verdict, VERDICT), decodedVerdict(rowLine, verdict), usage);
    }
  const verdict = '{"response":{"id":"r"},"reward":0.0,"category":"wrong_tool"}';
  const left = [
    [ROWS[0]!, '{"response":"text","reward":0.0,"category":"x"}'],
    [ROWS[0]!, '{"response": {"id":"r"},"reward":0.0,"category":"x"}'],
    [ROWS[0]!, '{"response":{"id":"r"},"reward":0.0}'],
    [ROWS[0]!, '{"reward":0.0,"response":{"id":"r"},"category":"x"}'],
    [`${ROWS[0]!.slice(0, -1)},"reward":1.0}`, verdict],
    ['{"responses_create_params": {},"_ng_task_index":0}', verdict],
  ] as const;
  for (const [rowLine, v] of left) assert.equal(splicedVerdict(rowLine, v, VERDICT), undefined, `${rowLine} ${v}`);
});
