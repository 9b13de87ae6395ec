import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { random as randomSource } from '../../helpers/random';
import { decodePythonJson, PythonJsonFailure } from '../../../gym/pythonJson';
import { isPythonJson } from '../../../gym/verifier/argumentText';
import { compareArgumentTexts, UNDECIDED } from '../../../gym/verifier/argumentPair';
import { compareArgumentValues } from '../../../gym/verifier/compare';
import { toolCallComparatorConfigSchema } from '../../../gym/verifier/config';
import { fixturesDir } from '../../helpers/fixtures';

/** The verdict of the decoding path: both texts through `json.loads`, then the tree walk. */
function decodedVerdict(expected: string, actual: string, floatThreshold: number, wordThreshold: number) {
  const expectedValue = decodePythonJson(expected);
  if (expectedValue instanceof PythonJsonFailure) return UNDECIDED;
  const actualValue = decodePythonJson(actual);
  if (actualValue instanceof PythonJsonFailure) return 'ARGUMENTS_DECODE_ERROR';
  const config = toolCallComparatorConfigSchema.parse({
    word_count_similarity_threshold: wordThreshold,
    floating_point_comparison_threshold: floatThreshold,
  });
  return compareArgumentValues(expectedValue, actualValue, config);
}

const KEYS = ['a', 'b', 'city', 'x', '10', '2', '__proto__', 'a\\u0062'];
const WORDS = ['Paris', 'paris', 'new', 'York', 'NEW', 'ß', 'ΟΔΟΣ', 'a', 'b'];
const SEPARATORS = [
  ' ',
  '  ',
  '\\n',
  '\\t',
  '\\r',
  '\\f',
  '\\u0041',
  '\\ud83d\\ude00',
  '\\u00a0',
  '\\u0085',
  '\\b',
  '\\"',
  '\\/',
];
const SCALARS = [
  '0',
  '-0',
  '1',
  '2',
  '1.0',
  '1.0000001',
  '1E2',
  '100.0',
  '-0.0',
  '1e400',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '9007199254740992',
  '0.1',
  '0.30000000000000004',
  'true',
  'false',
  'null',
  '""',
  '" "',
  '"x"',
];

function randomText(random: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const space = () => pick(['', '', ' ', '\n  ', '\t']);
  const roll = random();
  if (depth < 3 && roll < 0.25) {
    const members = Array.from(
      { length: Math.floor(random() * 4) },
      () => `${space()}"${pick(KEYS)}"${space()}:${space()}${randomText(random, depth + 1)}`,
    );
    return `{${members.join(',')}${space()}}`;
  }
  if (depth < 3 && roll < 0.4) {
    return `[${Array.from({ length: Math.floor(random() * 4) }, () => space() + randomText(random, depth + 1)).join(',')}]`;
  }
  if (roll < 0.6) {
    const words = Array.from({ length: Math.floor(random() * 4) }, () => pick(WORDS));
    return `"${words.map((word, index) => (index ? pick(SEPARATORS) : '') + word).join('')}"`;
  }
  return pick(SCALARS);
}

/** The ways a policy's arguments differ from the expected ones, including broken JSON. */
function mutate(random: () => number, text: string): string {
  const at = Math.floor(random() * (text.length + 1));
  switch (Math.floor(random() * 8)) {
    case 0:
      return text;
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + [',', '}', ']', '"', ' ', '\\', '0', 'e'][Math.floor(random() * 8)] + text.slice(at);
    case 3:
      return text.replace(/\}$/, ',}');
    case 4:
      return text.replace(/"([^"\\]*)":/, '"$1_x":');
    case 5:
      return randomText(random, 0);
    case 6: {
      // The same members in another order.
      const value = decodePythonJson(text);
      if (!(value instanceof Map)) return text;
      return `{${[...value.keys()]
        .reverse()
        .map((key) => `${JSON.stringify(key)}: ${text.includes(':') ? randomText(random, 1) : '1'}`)
        .join(', ')}}`;
    }
    default:
      return text.replace(/ /g, '');
  }
}

test('the in-place verdict equals the decoding path on fuzzed argument pairs', () => {
  const random = randomSource(20240611);
  let decided = 0;
  const runs = 40_000;
  for (let run = 0; run < runs; run++) {
    const expected = randomText(random, 0);
    const actual = mutate(random, expected);
    const floatThreshold = [1e-6, 0, 0.5][run % 3] as number;
    const wordThreshold = [0.5, 0.25, 0.51, 0][run % 4] as number;
    const inPlace = compareArgumentTexts(expected, actual, floatThreshold, wordThreshold);
    if (inPlace === UNDECIDED) continue;
    decided++;
    assert.equal(
      inPlace,
      decodedVerdict(expected, actual, floatThreshold, wordThreshold),
      `${expected}  vs  ${actual}`,
    );
  }
  // Most pairs must take the in-place path, or the test would not be testing it.
  assert.ok(decided > runs * 0.8, `only ${decided} of ${runs} decided in place`);
});

test('the in-place verdict equals the decoding path on every vector pair', () => {
  const lines = fs
    .readFileSync(path.join(fixturesDir, 'verifier/vectors.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);
  const texts: string[] = [];
  for (const line of lines) {
    for (const match of line.matchAll(/"arguments": ?("(?:[^"\\]|\\.)*")/g))
      texts.push(JSON.parse(match[1] as string) as string);
  }
  assert.ok(texts.length > 4000);
  // Every text against its neighbours: same shapes, other shapes, broken ones.
  for (let i = 0; i < texts.length; i++) {
    for (const j of [i, i + 1, i + 7]) {
      const expected = texts[i] as string;
      const actual = texts[j % texts.length] as string;
      const inPlace = compareArgumentTexts(expected, actual, 1e-6, 0.5);
      if (inPlace !== UNDECIDED)
        assert.equal(inPlace, decodedVerdict(expected, actual, 1e-6, 0.5), `${expected}  vs  ${actual}`);
    }
  }
});

test('an actual string literal is read as json.loads reads it, in the ASCII word path and out of it', () => {
  // Raw control characters are invalid inside a literal; only the \n \t \r \f escapes split words in place.
  const contents = [
    'new york',
    'NEW York',
    'new\tyork',
    'new\nyork',
    'new\u0001york',
    'new\u001fyork',
    'new\u007fyork',
    'new\\nyork',
    'new\\tYORK',
    'new\\fyork',
    'new\\byork',
    'new\\u0020york',
    'new\\"york',
    'new\\/york',
    'new york\\',
    'café york',
    'york',
    'York',
    '',
    Array.from({ length: 70 }, (_, index) => `w${index % 5}`).join(' '),
  ];
  for (const expected of [
    'new york',
    'York',
    'new\\nyork',
    Array.from({ length: 66 }, (_, index) => `w${index % 3}`).join(' '),
  ]) {
    for (const content of contents) {
      for (const actual of [`{"a": "${content}", "b": 1}`, `{"a": "${content}`, `["${content}"]`]) {
        for (const wordThreshold of [0, 0.25, 0.5, 0.51]) {
          const expectedText = `{"a": "${expected}", "b": 1}`;
          const inPlace = compareArgumentTexts(expectedText, actual, 1e-6, wordThreshold);
          assert.notEqual(inPlace, UNDECIDED, `${expectedText}  vs  ${actual}`);
          assert.equal(
            inPlace,
            decodedVerdict(expectedText, actual, 1e-6, wordThreshold),
            `${expectedText}  vs  ${JSON.stringify(actual)} at ${wordThreshold}`,
          );
        }
      }
    }
  }
});

test('the validity check accepts exactly what json.loads accepts', () => {
  const random = randomSource(7);
  for (let run = 0; run < 40_000; run++) {
    const text = mutate(random, randomText(random, 0));
    assert.equal(isPythonJson(text), !(decodePythonJson(text) instanceof PythonJsonFailure), text);
  }
  for (const text of [
    '\ufeff1',
    ' 1 ',
    '1 \f',
    '[1,]',
    '{"a":1,}',
    '"\\u12"',
    '"\\u0041',
    '"\\x41"',
    '01',
    '-',
    '1.',
    '1e',
    '1e+',
    '-NaN',
    'nan',
    'Infinity',
    '-Infinity',
    '"\u0001"',
    '"\u007f\u2028"',
  ]) {
    assert.equal(isPythonJson(text), !(decodePythonJson(text) instanceof PythonJsonFailure), JSON.stringify(text));
  }
});

test('only the actual text being broken is a decode error; a broken expected text is left undecided', () => {
  assert.equal(compareArgumentTexts('{"a": 1}', '{"a": 1,}', 1e-6, 0.5), 'ARGUMENTS_DECODE_ERROR');
  assert.equal(compareArgumentTexts('{"a": 1,}', '{"a": 1,}', 1e-6, 0.5), UNDECIDED);
  assert.equal(
    compareArgumentTexts('{"a": [1, 2], "b": 1}', '{"a": [1], "b": x}', 1e-6, 0.5),
    'ARGUMENTS_DECODE_ERROR',
  );
  // Keys compared as sets before any value: a missing key outranks an earlier value mismatch.
  assert.equal(compareArgumentTexts('{"a": 1, "b": 2}', '{"a": 5}', 1e-6, 0.5), 'ARGUMENT_OBJECT_KEYS_DIFFERENT');
  // A list length difference outranks a mismatch inside the list.
  assert.equal(compareArgumentTexts('[1, 2]', '[5, 2, 3]', 1e-6, 0.5), 'ARGUMENT_LIST_LENGTH_DIFFERENT');
  // Duplicate keys need the decoder's last-one-wins rule.
  assert.equal(compareArgumentTexts('{"a": 1, "a": 2}', '{"a": 2}', 1e-6, 0.5), UNDECIDED);
});

test('keys in another order: the first mismatch in expected key order is the verdict, and a differing key set outranks it', () => {
  const cases: [expected: string, actual: string, verdict: string | null][] = [
    // In actual order the values mismatch as type, value, type; in expected order "a" comes first.
    ['{"a": 1, "b": 2, "c": 3}', '{"c": "x", "a": 5, "b": "y"}', 'ARGUMENT_VALUE_DIFFERENT'],
    ['{"a": 1, "b": 2, "c": 3}', '{"c": 3, "b": "y", "a": 1}', 'ARGUMENT_VALUE_TYPE_DIFFERENT'],
    ['{"a": 1, "b": 2, "c": 3}', '{"c": 3, "b": 2, "a": 1}', null],
    // A mismatch in the members that paired in order comes before the rest's.
    ['{"p": 1, "a": 1, "b": 2}', '{"p": 2, "b": "x", "a": 1}', 'ARGUMENT_VALUE_DIFFERENT'],
    ['{"a": 1, "b": 2}', '{"b": "x", "c": 1}', 'ARGUMENT_OBJECT_KEYS_DIFFERENT'],
    ['{"a": 1, "b": 2, "c": 3}', '{"c": "x", "a": 1}', 'ARGUMENT_OBJECT_KEYS_DIFFERENT'],
    // An invalid value after the first mismatch still makes the text invalid.
    ['{"a": 1, "b": 2}', '{"b": 2, "a": 5, "c": }', 'ARGUMENTS_DECODE_ERROR'],
  ];
  for (const [expected, actual, verdict] of cases) {
    assert.equal(compareArgumentTexts(expected, actual, 1e-6, 0.5), verdict, `${expected}  vs  ${actual}`);
    assert.equal(decodedVerdict(expected, actual, 1e-6, 0.5), verdict, `decoding path: ${expected}  vs  ${actual}`);
  }
});

test('an argument text repeated exactly matches unless one of its surviving values does not match itself', () => {
  const cases: [text: string, floatThreshold: number, wordThreshold: number, verdict: string | null][] = [
    ['{"a": [1, -0, "two words", 1.5, 2e3, null, true], "b": {"c": "\\u00e9t\\u00e9"}}', 1e-6, 0.5, null],
    ['{"a": NaN}', 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    ['[-Infinity]', 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    ['[1e400]', 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    // Written out without an exponent: 309 digits overflow a double, 308 do not.
    [`[${'9'.repeat(309)}.0]`, 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    [`[${'9'.repeat(308)}.0]`, 1e-6, 0.5, null],
    // With an exponent: the largest double, the first literal that rounds past it, tiny ones that
    // round to 0.0 (finite), and a long integer part that a negative exponent does not bring back.
    ['[1.7976931348623157e308, 17976931348623157e292, 9.9e307]', 1e-6, 0.5, null],
    ['[17976931348623159e292]', 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    ['[1000e306]', 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    ['[1e-400, 0.1e309, -2.5E+307]', 1e-6, 0.5, null],
    [`[1${'0'.repeat(320)}e-5]`, 1e-6, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    [`[1${'0'.repeat(320)}e-50]`, 1e-6, 0.5, null],
    // Python keeps the last of duplicate keys, so the NaN is never compared.
    ['{"a": NaN, "a": 1}', 1e-6, 0.5, null],
    ['{"a": 1, "a": [2]}', 1e-6, 0.5, null],
    ['{"a": 1.5}', 0, 0.5, 'ARGUMENT_VALUE_DIFFERENT'],
    ['{"a": "two words"}', 1e-6, 0.51, 'ARGUMENT_VALUE_DIFFERENT'],
    ['{"a": "one"}', 1e-6, 0.51, null],
  ];
  for (const [text, floatThreshold, wordThreshold, verdict] of cases) {
    const copy = text.split('').join('');
    const inPlace = compareArgumentTexts(text, copy, floatThreshold, wordThreshold);
    assert.equal(
      inPlace === UNDECIDED ? decodedVerdict(text, copy, floatThreshold, wordThreshold) : inPlace,
      verdict,
      text,
    );
    assert.equal(decodedVerdict(text, copy, floatThreshold, wordThreshold), verdict, text);
  }
  // Decided by the one read: the pair walk leaves duplicate keys to the decoding path.
  assert.equal(compareArgumentTexts('{"a": 1, "a": [2]}', '{"a": 1, "a": [2]}', 1e-6, 0.5), null);
  assert.equal(compareArgumentTexts('{"a": 1, "a": [2]}', '{"a": 1, "a": [2] }', 1e-6, 0.5), UNDECIDED);
});
