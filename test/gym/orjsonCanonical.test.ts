import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseKinded } from '../../gym/kindedJson';
import { orjsonCanonicalObject } from '../../gym/orjsonCanonical';
import { random } from '../helpers/random';
import { fixtureRollouts, reencoded } from './rolloutFixtures';

// The scanner may say yes only where re-encoding would give the same bytes: what it accepts, the
// decode-and-encode path (itself checked against orjson in the NeMo Gym byte tests) must leave as it is.

const ROLLOUTS = fixtureRollouts();
/** Number-heavy texts beside them, so edits land in numbers and escapes often. */
const MUTATED = [
  ...ROLLOUTS,
  ...[
    '{"r":[1.5,0.25,1.0,-3.75,1e-6,123.456,7,0,-12,1e+16,0.1],"s":"x\\ty\\n\\u0001","n":{"k":0.001,"j":-0.0}}',
    '{"reward":1.0,"lr":2.5e-7,"t":1700000000.0,"ids":{"10":1,"2":2}}',
  ].map(reencoded),
];

/** An object text's keys in the order written, read by the Python-semantics decoder. */
function keysInOrder(text: string): string[] {
  const { kinded, plain } = parseKinded(text);
  return kinded instanceof Map ? [...kinded.keys()] : Object.keys(plain as object);
}

test('rollouts in orjson form are accepted, with their top-level and response entries in order', () => {
  assert.ok(ROLLOUTS.length >= 30, `fixture rollouts: ${ROLLOUTS.length}`);
  for (const text of ROLLOUTS) {
    const scanned = orjsonCanonicalObject(text, 'response');
    assert.ok(scanned, text.slice(0, 200));
    assert.deepEqual(
      scanned.entries.map((e) => e.key),
      keysInOrder(text),
    );
    for (const e of scanned.entries) {
      assert.equal(text.slice(e.start, e.valueStart), `${JSON.stringify(e.key)}:`);
      assert.doesNotThrow(() => JSON.parse(text.slice(e.valueStart, e.end)), e.key);
    }
    const response = scanned.entries.find((e) => e.key === 'response')!;
    assert.deepEqual(
      scanned.nested?.map((e) => e.key),
      keysInOrder(text.slice(response.valueStart, response.end)),
    );
  }
});

test('texts orjson would write differently are refused', () => {
  const refused = [
    '{"a": 1}',
    '{"a":1} ',
    '{"a":"caf\\u00e9"}',
    '{"a":"a\\/b"}',
    '{"a":"\\u000a"}',
    '{"a":"\\u001F"}',
    '{"a":"\\ud83d\\ude00"}',
    '{"a":1.50}',
    '{"a":1E5}',
    '{"a":1e-05}',
    '{"a":2e3}',
    '{"a":-0}',
    '{"a":1234567890123456789}',
    '{"a":1,"a":2}',
    '{"x":{"b":1,"c":2,"b":3}}',
    '{"a":01}',
    '{"a":.5}',
    '{"a":1.}',
    '{"a":tru}',
    '{"a":1',
    '[1]',
    '"a"',
    '{"a":"\u0001"}',
    '{"a":"\ud800"}',
    `{"a":${'['.repeat(600)}${']'.repeat(600)}}`,
  ];
  for (const text of refused) assert.equal(orjsonCanonicalObject(text), undefined, text.slice(0, 80));
});

test('texts already in orjson form are accepted', () => {
  const accepted = [
    '{}',
    '{"a":"caf\u00e9 \ud83d\ude00 \u007f /"}',
    '{"a":"\\u0001\\b\\t\\n\\f\\r\\"\\\\"}',
    '{"a":1.0,"b":-0.0,"c":0.5,"d":1e-6,"e":1e+16,"f":123456789012345678}',
    '{"2":"b","1":"a","x":[],"y":{},"z":[true,false,null]}',
    '{"a":{"a":{"a":1}}}',
  ];
  for (const text of accepted) {
    assert.ok(orjsonCanonicalObject(text), text);
    assert.equal(reencoded(text), text);
  }
});

const EDITS = [
  ' ',
  '0',
  '5',
  '.',
  'e',
  '-',
  '"',
  '\\',
  ',',
  ':',
  '{',
  '}',
  '[',
  ']',
  '\\u00e9',
  '\\/',
  '\\u0041',
  'E',
  '+',
  '00',
  '.0',
  '1.50',
];

test('a mutated rollout is accepted only when re-encoding it gives its own bytes', () => {
  const next = random(42);
  let accepted = 0;
  let checked = 0;
  for (let round = 0; round < 4000; round++) {
    const base =
      round % 2 ? MUTATED[MUTATED.length - 1 - ((round % 4) >> 1)]! : MUTATED[Math.floor(next() * MUTATED.length)]!;
    // Every other edit lands right after a digit, where a number's lexeme changes.
    const from = Math.floor(next() * base.length);
    const digit = base.slice(from).search(/[0-9]/);
    const at = round % 2 && digit >= 0 ? from + digit + 1 : from;
    const edit = EDITS[Math.floor(next() * EDITS.length)]!;
    const cut = next() < 0.5 ? 0 : 1;
    const text = base.slice(0, at) + edit + base.slice(at + cut);
    if (!orjsonCanonicalObject(text)) continue;
    accepted++;
    let same: boolean;
    try {
      same = reencoded(text) === text;
    } catch {
      same = false;
    }
    checked++;
    assert.ok(
      same,
      `round ${round}: accepted, but re-encoding changes it near ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 40))}`,
    );
  }
  assert.ok(accepted > 100 && checked === accepted, `accepted ${accepted} of 4000 mutations`);
});
