import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { jsonLine, readJsonl, type JsonlRecord } from '../../gym/jsonl';
import { JsonlError } from '../../gym/errors';
import {
  materializeOptionsSchema,
  materializeRecords,
  materializeRows,
  type MaterializeOptions,
} from '../../gym/materialize';
import { fixturesDir } from '../helpers/fixtures';

function records(lines: string[]): JsonlRecord[] {
  let offset = 0;
  return lines.map((text, i) => {
    const record = {
      value: JSON.parse(text) as unknown,
      line: i + 1,
      byteOffset: offset,
      byteLength: text.length + 1,
      text,
    };
    offset += record.byteLength;
    return record;
  });
}

function options(overrides: Partial<MaterializeOptions> = {}): MaterializeOptions {
  return materializeOptionsSchema.parse({ agent_name: 'my_agent', ...overrides });
}

async function collect(lines: string[], opts: MaterializeOptions): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const row of materializeRows(records(lines), opts, 'in.jsonl')) out.push(row);
  return out;
}

const keys = (rows: Record<string, unknown>[]): [unknown, unknown, unknown][] =>
  rows.map((r) => [r.x, r._ng_task_index, r._ng_rollout_index]);

test('options default like NeMo Gym: one repeat, no overrides, no seed, no limit', () => {
  assert.deepEqual(materializeOptionsSchema.parse({ agent_name: 'a' }), {
    agent_name: 'a',
    num_repeats: 1,
    responses_create_params: {},
    seed_per_repeat: false,
  });
  assert.throws(() => materializeOptionsSchema.parse({ agent_name: 'a', num_repeats: 0 }));
  assert.throws(() => materializeOptionsSchema.parse({ agent_name: 'a', limit: 0 }));
});

test('rows repeat abc → aabbcc with per-task rollout indices', async () => {
  const lines = ['a', 'b', 'c'].map((x) => JSON.stringify({ responses_create_params: { input: [] }, x }));
  const rows = await collect(lines, options({ num_repeats: 2 }));
  assert.deepEqual(keys(rows), [
    ['a', 0, 0],
    ['a', 0, 1],
    ['b', 1, 0],
    ['b', 1, 1],
    ['c', 2, 0],
    ['c', 2, 1],
  ]);
  assert.notEqual(rows[0], rows[1]);
});

test('agent_ref is added as {name} after existing keys; an existing agent_ref is kept', async () => {
  const rows = await collect(
    [
      '{"responses_create_params":{"input":"hi"},"extra":{"k":[1,2]}}',
      '{"agent_ref":{"type":"responses_api_agents","name":"other"},"responses_create_params":{"input":"yo"}}',
    ],
    options(),
  );
  assert.equal(
    JSON.stringify(rows[0]),
    '{"responses_create_params":{"input":"hi"},"extra":{"k":[1,2]},"agent_ref":{"name":"my_agent"},"_ng_task_index":0,"_ng_rollout_index":0}',
  );
  assert.equal(
    JSON.stringify(rows[1]),
    '{"agent_ref":{"type":"responses_api_agents","name":"other"},"responses_create_params":{"input":"yo"},"_ng_task_index":1,"_ng_rollout_index":0}',
  );
});

test('responses_create_params overrides merge shallowly: existing keys keep place, overrides win', async () => {
  const rows = await collect(
    ['{"responses_create_params":{"temperature":1,"input":[],"metadata":{"a":"1"}}}'],
    options({ responses_create_params: { temperature: 0.1, max_output_tokens: 64, metadata: { b: '2' } } }),
  );
  assert.equal(
    JSON.stringify(rows[0]?.responses_create_params),
    '{"temperature":0.1,"input":[],"metadata":{"b":"2"},"max_output_tokens":64}',
  );
});

test('identical lines share a task index and continue its rollout indices', async () => {
  const a = '{"responses_create_params":{"input":[]},"x":"a"}';
  const b = '{"responses_create_params":{"input":[]},"x":"b"}';
  const aSpaced = '{"responses_create_params": {"input": []}, "x": "a"}';
  const rows = await collect([a, b, a, aSpaced], options({ num_repeats: 2, seed_per_repeat: true }));
  assert.deepEqual(keys(rows), [
    ['a', 0, 0],
    ['a', 0, 1],
    ['b', 1, 0],
    ['b', 1, 1],
    ['a', 0, 2],
    ['a', 0, 3],
    // Same value, different line text: upstream dedupes on the line string, so this is a new task.
    ['a', 2, 0],
    ['a', 2, 1],
  ]);
  const seeds = rows.map(
    (r) => (r.responses_create_params as { metadata: { extra_body: string } }).metadata.extra_body,
  );
  assert.deepEqual(
    seeds,
    [0, 1, 0, 1, 2, 3, 0, 1].map((s) => `{"seed": ${s}}`),
  );
});

test('a row bringing its own _ng_task_index keeps it and does not consume an automatic index', async () => {
  const rows = await collect(
    [
      '{"_ng_task_index":7,"responses_create_params":{"input":[]},"x":"own"}',
      '{"responses_create_params":{"input":[]},"x":"auto"}',
      '{"_ng_task_index":7,"_ng_rollout_index":99,"responses_create_params":{"input":[]},"x":"own2"}',
    ],
    options(),
  );
  assert.deepEqual(keys(rows), [
    ['own', 7, 0],
    ['auto', 0, 0],
    ['own2', 7, 1],
  ]);
  assert.equal(Object.keys(rows[0]!)[0], '_ng_task_index');
});

test('seed merges into an existing extra_body written with Python json.dumps', async () => {
  const rows = await collect(
    [JSON.stringify({ responses_create_params: { input: [], metadata: { extra_body: '{"top_k": 5, "note": "é"}' } } })],
    options({ num_repeats: 2, seed_per_repeat: true }),
  );
  assert.deepEqual(
    rows.map((r) => (r.responses_create_params as { metadata: { extra_body: string } }).metadata.extra_body),
    ['{"top_k": 5, "note": "\\u00e9", "seed": 0}', '{"top_k": 5, "note": "\\u00e9", "seed": 1}'],
  );
});

test('seed keeps what Python json.loads/json.dumps keep in extra_body: float kinds, key order, big ints, an existing seed place', async () => {
  const extraBody = '{"t": 1.0, "2": "x", "a": 1e-7, "big": 12345678901234567890, "seed": 9, "n": [2.50, 3]}';
  const rows = await collect(
    [JSON.stringify({ responses_create_params: { input: [], metadata: { extra_body: extraBody } } })],
    options({ num_repeats: 1, seed_per_repeat: true }),
  );
  // The expected text is what CPython prints for json.dumps(json.loads(extra_body) | {"seed": 0}).
  assert.equal(
    (rows[0]!.responses_create_params as { metadata: { extra_body: string } }).metadata.extra_body,
    '{"t": 1.0, "2": "x", "a": 1e-07, "big": 12345678901234567890, "seed": 0, "n": [2.5, 3]}',
  );
});

test('limit counts input rows and never reads past them', async () => {
  const lines = [
    '{"responses_create_params":{"input":[]},"x":1}',
    '{"responses_create_params":{"input":[]},"x":2}',
    'null',
  ];
  const rows = await collect(lines, options({ limit: 2, num_repeats: 3 }));
  assert.equal(rows.length, 6);
});

test('bad rows throw a JsonlError naming file, line and reason', async () => {
  const cases: [string, RegExp][] = [
    ['[1,2]', /not a task row/],
    ['{"x":1}', /responses_create_params/],
    ['{"responses_create_params":{"input":[]},"agent_ref":{"type":"x"}}', /agent_ref\.name/],
    ['{"responses_create_params":{"input":[]},"_ng_task_index":-1}', /_ng_task_index/],
  ];
  for (const [bad, reason] of cases) {
    const lines = ['{"responses_create_params":{"input":[]}}', bad];
    await assert.rejects(collect(lines, options()), (err: unknown) => {
      assert.ok(err instanceof JsonlError);
      assert.equal(err.file, 'in.jsonl');
      assert.equal(err.line, 2);
      assert.match(err.message, /^in\.jsonl:2: /);
      assert.match(err.reason, reason);
      return true;
    });
  }
});

test('materializing like the reward-profile fixture reproduces its materialized inputs', async () => {
  const cases = JSON.parse(await readFile(path.join(fixturesDir, 'gym/reward_profile_cases.json'), 'utf8')) as {
    name: string;
    materialized_inputs: unknown[];
  }[];
  const expected = cases.find((c) => c.name === 'test_profile_from_data')!.materialized_inputs;
  const lines = [0, 1, 2].map((x) => JSON.stringify({ responses_create_params: { input: [] }, x }));
  const rows = await collect(
    lines,
    options({ num_repeats: 2, seed_per_repeat: true, responses_create_params: { temperature: 0.1 } }),
  );
  assert.deepEqual(rows, expected);
});

test('upstream example rows stream from disk through materialization untouched', async () => {
  const file = path.join(fixturesDir, 'gym/single_step_tool_use_with_argument_comparison/example.jsonl');
  const source = (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const rows: Record<string, unknown>[] = [];
  for await (const row of materializeRows(readJsonl(file), options({ num_repeats: 3 }), file)) rows.push(row);
  assert.equal(rows.length, source.length * 3);
  rows.forEach((row, i) => {
    const { agent_ref, _ng_task_index, _ng_rollout_index, ...rest } = row;
    assert.deepEqual(rest, source[Math.floor(i / 3)]);
    assert.deepEqual(agent_ref, { name: 'my_agent' });
    assert.equal(_ng_task_index, Math.floor(i / 3));
    assert.equal(_ng_rollout_index, i % 3);
  });
});

test("materializeRecords names the input line of every repeat, and keeps each row's own agent_ref", async () => {
  const lines = [
    '{"x":"a","responses_create_params":{"input":"hi"},"agent_ref":{"name":"other"}}',
    '{"x":"b","responses_create_params":{"input":"hi"}}',
  ];
  const out: string[] = [];
  for await (const { row, line } of materializeRecords(records(lines), options({ num_repeats: 2 }), 'in.jsonl')) {
    out.push(`${line}:${row.agent_ref.name}:${row._ng_rollout_index}`);
  }
  assert.deepEqual(out, ['1:other:0', '1:other:1', '2:my_agent:0', '2:my_agent:1']);
});

test("materialized rows keep the number kinds of their input line, as upstream's orjson round trip does", async () => {
  const lines = [
    '{"x":1.0,"big":12345678901234567890,"keys":{"2":"b","1":"a"},"responses_create_params":{"input":"hi","temperature":1.0}}',
    '{"x":1,"responses_create_params":{"input":"hi"}}',
  ];
  const out: string[] = [];
  const opts = options({ seed_per_repeat: true, responses_create_params: { top_p: 0.5 } });
  for await (const { row, value } of materializeRecords(records(lines), opts, 'in.jsonl')) {
    out.push(jsonLine(value));
    assert.equal(typeof row._ng_task_index, 'number', 'the row read for fields stays plain');
  }
  const params = (seed: number, extra = '') =>
    `"responses_create_params":{"input":"hi"${extra},"top_p":0.5,"metadata":{"extra_body":"{\\"seed\\": ${seed}}"}}`;
  assert.deepEqual(out, [
    `{"x":1.0,"big":12345678901234567890,"keys":{"2":"b","1":"a"},${params(0, ',"temperature":1.0')},"agent_ref":{"name":"my_agent"},"_ng_task_index":0,"_ng_rollout_index":0}\n`,
    `{"x":1,${params(0)},"agent_ref":{"name":"my_agent"},"_ng_task_index":1,"_ng_rollout_index":0}\n`,
  ]);
});

test("fan_out copies as 0.7.0 writes them: a row's own agent_ref kept for its own agent, {name} elsewhere", async () => {
  const lines = [
    '{"x":1.0,"responses_create_params":{"input":"hi"},"task_source":"t"}',
    '{"agent_ref":{"type":"responses_api_agents","name":"a"},"responses_create_params":{"input":"yo"}}',
  ];
  const opts = materializeOptionsSchema.parse({
    fan_out: { t: ['A', 'B'], a: ['a', 'B'] },
    num_repeats: 2,
    seed_per_repeat: true,
  });
  const out: string[] = [];
  for await (const { text } of materializeRecords(records(lines), opts, 'in.jsonl')) out.push(text);
  const params = (input: string, seed: number) =>
    `"responses_create_params":{"input":"${input}","metadata":{"extra_body":"{\\"seed\\": ${seed}}"}}`;
  // Without an agent_ref, a copy's comes after _ng_task_index; an agent_ref the row has keeps its place.
  assert.deepEqual(out, [
    ...[0, 1, 2, 3].map(
      (i) =>
        `{"x":1.0,${params('hi', i)},"task_source":"t","_ng_task_index":0,"agent_ref":{"name":"${i < 2 ? 'A' : 'B'}"},"_ng_rollout_index":${i}}`,
    ),
    ...[0, 1, 2, 3].map(
      (i) =>
        `{"agent_ref":${i < 2 ? '{"type":"responses_api_agents","name":"a"}' : '{"name":"B"}'},${params('yo', i)},"_ng_task_index":1,"_ng_rollout_index":${i}}`,
    ),
  ]);
});
