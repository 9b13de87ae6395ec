import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { JsonlError } from '../../gym/errors';
import { jsonText, readJsonl, type JsonlRecord } from '../../gym/jsonl';
import { kindedFrom, type JsonDict } from '../../gym/kindedJson';
import { materializeOptionsSchema, materializeRecords } from '../../gym/materialize';
import { REPEAT_MARKER, RepeatLines } from '../../gym/repeatLines';
import { fixturesDir } from '../helpers/fixtures';

function records(lines: string[]): JsonlRecord[] {
  return lines.map((text, i) => ({
    value: JSON.parse(text) as unknown,
    line: i + 1,
    byteOffset: 0,
    byteLength: text.length + 1,
    text,
  }));
}

/** Every repeat's text against its value serialized whole, for each way a row can be repeated. */
async function assertTextsAreWholeSerializations(
  rows: Iterable<JsonlRecord> | AsyncIterable<JsonlRecord>,
  label: string,
): Promise<number> {
  const buffered: JsonlRecord[] = [];
  for await (const record of rows) buffered.push(record);
  let checked = 0;
  for (const seed_per_repeat of [false, true]) {
    for (const num_repeats of [1, 2, 5]) {
      const options = materializeOptionsSchema.parse({
        agent_name: 'a',
        num_repeats,
        seed_per_repeat,
        responses_create_params: { top_p: 0.5 },
      });
      // Row by row, since upstream refuses a seed for a row whose metadata is not an object.
      for (const record of buffered) {
        try {
          for await (const { value, text } of materializeRecords([record], options, label)) {
            assert.equal(
              text,
              jsonText(value),
              `${label}:${record.line} (num_repeats ${num_repeats}, seed_per_repeat ${seed_per_repeat})`,
            );
            checked++;
          }
        } catch (err) {
          assert.ok(
            err instanceof JsonlError && seed_per_repeat && /metadata must be an object/.test(err.message),
            err as Error,
          );
        }
      }
    }
  }
  return checked;
}

test("each repeat's line is the bytes of its row serialized whole, on every task row of the NeMo Gym fixtures", async () => {
  const gymDir = path.join(fixturesDir, 'gym');
  let checked = 0;
  for (const dir of readdirSync(gymDir, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    const file = path.join(gymDir, dir.name, 'example.jsonl');
    if (!readdirSync(path.join(gymDir, dir.name)).includes('example.jsonl')) continue;
    checked += await assertTextsAreWholeSerializations(readJsonl(file), file);
  }
  assert.ok(checked > 100, `only ${checked} repeats checked`);
});

test("repeat lines keep number kinds, key places, an existing rollout index, extra_body's own entries and orjson's exponents", async () => {
  const checked = await assertTextsAreWholeSerializations(
    records([
      // A rollout index the row brings is overwritten where it stands, before responses_create_params.
      '{"_ng_rollout_index":7,"x":1.0,"responses_create_params":{"input":"hi","metadata":{"a":"b","extra_body":"{\\"temperature\\": 1.0, \\"seed\\": 99, \\"z\\": \\"\\u00e9\\"}","c":2}}}',
      // Integer-like keys and big ints make the row a PyDict; 1e-6 sends it to the orjson writer.
      '{"2":"b","1":"a","big":12345678901234567890,"tiny":1e-6,"responses_create_params":{"input":[{"role":"user","content":"0.000001 \\u2028 \\"q\\""}]}}',
      // An agent_ref of its own, a task index of its own, non-ASCII and escapes.
      '{"_ng_task_index":3,"agent_ref":{"name":"b"},"s":"é\\n\\t\\u0001","responses_create_params":{"input":"hi","metadata":{}}}',
    ]),
    'rows.jsonl',
  );
  assert.equal(checked, 3 * (1 + 2 + 5) * 2);
});

test('a row holding a marker is serialized whole for every repeat', async () => {
  const line = JSON.stringify({ note: `${REPEAT_MARKER}-rollout-index`, responses_create_params: { input: 'hi' } });
  const [record] = records([line]);
  const row = kindedFrom(line, record!.value) as JsonDict;
  assert.equal(RepeatLines.of({ ...row, _ng_rollout_index: 0 }, false), undefined);
  assert.ok(
    RepeatLines.of({ ...row, note: 'plain', _ng_rollout_index: 0 }, false),
    'the same row without the marker is split',
  );
  await assertTextsAreWholeSerializations([record!], 'marker.jsonl');
});

test('RepeatLines puts the values in the marked places, in the order the row holds them', () => {
  const repeat = {
    _ng_rollout_index: 0,
    responses_create_params: { input: 'hi', metadata: { extra_body: '{"seed": 0}' } },
    last: true,
  };
  const lines = RepeatLines.of(repeat, true);
  assert.ok(lines);
  assert.equal(
    lines.line(12, '{"seed": 12}'),
    '{"_ng_rollout_index":12,"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 12}"}},"last":true}',
  );
  const withoutSeed = RepeatLines.of(repeat, false);
  assert.ok(withoutSeed);
  assert.equal(
    withoutSeed.line(3, undefined),
    '{"_ng_rollout_index":3,"responses_create_params":{"input":"hi","metadata":{"extra_body":"{\\"seed\\": 0}"}},"last":true}',
  );
});
