import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { jsonLine, type JsonlRecord } from '../../../gym/jsonl';
import { materializeRecords } from '../../../gym/materialize';
import { orjsonDumps } from '../../../gym/pythonJsonDumps';
import { canonicalSample, sampleValue } from '../../../gym/rewardProfile/pythonTypes';
import { fixturesDir } from '../../helpers/fixtures';

// A sample cut out of a materialized line must be the bytes decoding the line and writing it back
// give: on every NeMo Gym task row of the fixtures and on rows whose numbers, keys and strings are
// the ones JSON.parse and JSON.stringify would get wrong.

const awkward = [
  '{"responses_create_params":{"input":"caf\u00e9 \\u0001\\t\\"q\\"","temperature":1.0,"top_p":1e-7},"big":12345678901234567890,"2":"x","a":[0.5,-0.0,1E3]}',
  '{"responses_create_params":{"input":[{"role":"user","content":"\\ud83d\\ude00 \u2028"}]},"metadata":{"extra_body":"{\\"k\\": 1.0}"}}',
];

function fixtureLines(): string[] {
  const gym = path.join(fixturesDir, 'gym');
  return readdirSync(gym)
    .map((name) => path.join(gym, name, 'example.jsonl'))
    .filter((file) => existsSync(file))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== ''),
    );
}

async function checkCuts(lines: string[], seedPerRepeat: boolean): Promise<number> {
  const records: JsonlRecord[] = lines.map((text, i) => ({
    value: JSON.parse(text) as unknown,
    line: i + 1,
    byteOffset: 0,
    byteLength: 0,
    text,
  }));
  let checked = 0;
  for await (const { value } of materializeRecords(
    records,
    { agent_name: 'a', num_repeats: 2, seed_per_repeat: seedPerRepeat, responses_create_params: {} },
    'x.jsonl',
  )) {
    const line = jsonLine(value).trimEnd();
    const cut = canonicalSample(line);
    assert.ok(cut, line.slice(-80));
    assert.equal(cut.text, orjsonDumps(sampleValue(line)));
    checked++;
  }
  return checked;
}

test('a sample cut out of a materialized line is the line decoded and written back', async () => {
  const lines = fixtureLines();
  assert.ok(lines.length > 30);
  assert.equal(await checkCuts(lines, false), 2 * lines.length);
  assert.equal(await checkCuts(awkward, true), 2 * awkward.length);
});

test('a line whose keys are not where materialization puts them is not cut', () => {
  assert.equal(canonicalSample('{"_ng_task_index":0,"_ng_rollout_index":1,"x":1}'), undefined);
});
