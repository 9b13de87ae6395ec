import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  codeAt,
  isPythonJson,
  lastScan,
  nextCode,
  sameRegion,
  scanLiteral,
  scanString,
  scanStringAgainst,
  skipWhitespace,
} from '../../../gym/verifier/argumentText';
import { decodePythonJson, PythonJsonFailure } from '../../../gym/pythonJson';
import { random as randomSource } from '../../helpers/random';
import { mutate, randomText } from './argumentPairFuzz';

test('codeAt reads a code unit in the text and -1 anywhere past its end', () => {
  const text = '{"a": "ÿ\u{1F600}"}';
  for (let index = 0; index < text.length; index++) assert.equal(codeAt(text, index), text.charCodeAt(index));
  for (const past of [text.length, text.length + 1, text.length + 100]) assert.equal(codeAt(text, past), -1);
  assert.equal(codeAt('', 0), -1);
});

test('sameRegion: a region that runs past its text matches nothing, an empty one matches an empty one', () => {
  assert.equal(sameRegion('abc', 1, 3, 'xbc', 1, 3), true);
  assert.equal(sameRegion('abc', 1, 3, 'xbd', 1, 3), false);
  assert.equal(sameRegion('abc', 1, 3, 'xb', 1, 3), false);
  assert.equal(sameRegion('ab', 1, 3, 'xbc', 1, 3), false);
  assert.equal(sameRegion('ab', 1, 3, 'xb', 1, 3), false);
  assert.equal(sameRegion('abc', 1, 3, 'abc', 0, 3), false);
  assert.equal(sameRegion('abc', 3, 3, 'x', 1, 1), true);
});

test('scanStringAgainst ends where scanString does and tells whether the other text repeats the literal', () => {
  const contents = [
    '',
    'a',
    'paris',
    'a\\"b',
    '\\u00e9t\\u00E9',
    'x\\\\',
    'tab\\there',
    'bad\\x',
    'cut\\u12',
    'raw\u0001',
    'unclosed',
  ];
  for (const content of contents) {
    const text = content === 'unclosed' ? '"unclosed' : `"${content}"`;
    const end = scanString(text, 1);
    const others = [
      text,
      `  ${text}`,
      text.slice(0, -1),
      `${text}x`,
      text.toUpperCase(),
      text.replace('a', 'b'),
      '"',
      '',
    ];
    for (let cut = 1; cut < text.length; cut++) others.push(`${text.slice(0, cut)}#${text.slice(cut + 1)}`);
    for (const other of others) {
      for (const otherStart of [0, 2]) {
        assert.equal(scanStringAgainst(text, 1, other, otherStart + 1), end, `${text} against ${other}`);
        if (end < 0) continue;
        const repeated = other.slice(otherStart, otherStart + end) === text.slice(0, end);
        assert.equal(lastScan.sameInOther, repeated, `${text} against ${other} from ${otherStart}`);
        assert.equal(lastScan.stringHadEscape, text.slice(0, end).includes('\\'), text);
      }
    }
  }
});

test('skipWhitespace stops at the first non-whitespace code unit and leaves it for nextCode, -1 at the end', () => {
  const cases: [text: string, from: number, index: number, code: number][] = [
    ['{"a": 1}', 0, 0, 0x7b],
    [' \t\r\n[1]', 0, 4, 0x5b],
    ['[1 ,2]', 2, 3, 0x2c],
    ['1  ', 1, 3, -1],
    ['', 0, 0, -1],
    // Only JSON's four whitespace characters are skipped.
    ['\f1', 0, 0, 0x0c],
    ['\u00a01', 0, 0, 0xa0],
  ];
  for (const [text, from, index, code] of cases) {
    assert.equal(skipWhitespace(text, from), index, JSON.stringify(text));
    assert.equal(nextCode(), code, JSON.stringify(text));
  }
});

test('scanLiteral takes null, true and false spelled exactly, wherever they stand, and nothing cut short', () => {
  for (const literal of ['null', 'true', 'false']) {
    for (const [before, after] of [
      ['', ''],
      ['[1, ', ']'],
      ['{"a": ', ', "b": 2}'],
    ]) {
      const text = before + literal + after;
      assert.equal(scanLiteral(text, before.length, literal.charCodeAt(0)), before.length + literal.length, text);
    }
    // Every shorter prefix at the end of a text, and every one-letter change, is not the literal.
    for (let length = 1; length < literal.length; length++) {
      assert.ok(scanLiteral(literal.slice(0, length), 0, literal.charCodeAt(0)) < 0, literal.slice(0, length));
    }
    for (let index = 1; index < literal.length; index++) {
      for (const other of [literal[index]!.toUpperCase(), 'x', '\u0000']) {
        const text = `${literal.slice(0, index)}${other}${literal.slice(index + 1)}`;
        assert.ok(scanLiteral(text, 0, literal.charCodeAt(0)) < 0, text);
      }
    }
  }
  assert.ok(scanLiteral('nan', 0, 0x6e) < 0);
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
