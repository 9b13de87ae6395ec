import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodePythonJson, MAX_NESTING_DEPTH, PythonJsonFailure } from '../../../gym/pythonJson';
import { FAILED, growScanBuffer, scanBuffer, StrictJsonLine } from '../../../gym/validator/strictJson';
import { random } from '../../helpers/random';

/** Whether the whole text is one strict-JSON value (leading and trailing whitespace allowed). */
function accepts(text: string): boolean {
  const bytes = Buffer.from(text);
  let at = 0;
  while (at < bytes.length && ' \t\n\r'.includes(String.fromCharCode(bytes[at] as number))) at++;
  const end = new StrictJsonLine(bytes).skipValue(at, 0);
  if (end === FAILED) return false;
  let rest = end;
  while (rest < bytes.length && ' \t\n\r'.includes(String.fromCharCode(bytes[rest] as number))) rest++;
  return rest === bytes.length;
}

const VALID = [
  '0',
  '-0',
  '1.5',
  '-12.25e+3',
  '1E-7',
  '12345678901234567890123',
  '1e400',
  'true',
  'false',
  'null',
  '""',
  '"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t"',
  '"\\u00e9\\uD83D\\ude00\\ud800"',
  '"caf\u00e9 \u2028 \ud83d\ude00"',
  '[]',
  '{}',
  ' [ 1 , [ ] , { } ] ',
  '{"a": {"b": [null, true]}, "a": 1}',
  '{"__proto__": 1}',
  '\t{\n"k"\r:\t"v" }',
  `${'['.repeat(MAX_NESTING_DEPTH)}${']'.repeat(MAX_NESTING_DEPTH)}`,
];

const INVALID = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  '01',
  '-',
  '1.',
  '.5',
  '1e',
  '1e+',
  '+1',
  '0x1',
  'tru',
  'nul',
  'True',
  '"abc',
  '"\\x"',
  '"\\u12g4"',
  '"\\u12"',
  '"a\u0001b"',
  '"tab\there"',
  '[1,]',
  '[,1]',
  '{"a":1,}',
  '{"a" 1}',
  '{a: 1}',
  "{'a': 1}",
  '[1 2]',
  '{"a":1 "b":2}',
  '[',
  '{',
  ']',
  '[1]]',
  '"\u00a0"x',
  '\u00a0[]',
  '\ufeff{}',
  '[1] x',
  `${'['.repeat(MAX_NESTING_DEPTH + 1)}${']'.repeat(MAX_NESTING_DEPTH + 1)}`,
];

test('accepts strict JSON, whatever its tokens, escapes and nesting up to the decoder limit', () => {
  for (const text of VALID) assert.ok(accepts(text), text.slice(0, 80));
});

test('declines what strict JSON does not allow, NaN and the BOM included', () => {
  for (const text of INVALID) assert.ok(!accepts(text), JSON.stringify(text.slice(0, 80)));
});

test('on token soup, everything it accepts both JSON.parse and CPython json.loads accept', () => {
  const next = random(12);
  const tokens = [
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    ' ',
    '"k"',
    '"\\u00e9"',
    '"\\q"',
    '1',
    '-0.5e3',
    '01',
    'true',
    'null',
    'NaN',
    '"',
    '\\',
    '\t',
    'x',
  ];
  let accepted = 0;
  for (let n = 0; n < 40_000; n++) {
    const text = Array.from(
      { length: 1 + Math.floor(next() * 8) },
      () => tokens[Math.floor(next() * tokens.length)],
    ).join('');
    if (!accepts(text)) continue;
    accepted++;
    assert.doesNotThrow(() => JSON.parse(text), text);
    assert.ok(!(decodePythonJson(text) instanceof PythonJsonFailure), text);
  }
  assert.ok(accepted > 500, `only ${accepted} accepted`);
});

test('every byte value, at every offset of a 16-byte block and in the bytes after the last, stops a string exactly when strict JSON says so', () => {
  for (let byte = 0; byte < 256; byte++) {
    // Below 0x20 a control character, then the quote and backslash; bytes from 0x80 are content
    // (the caller checks UTF-8), as is everything else.
    const plain = byte >= 0x20 && byte !== 0x22 && byte !== 0x5c;
    for (let at = 0; at < 40; at++) {
      for (const filler of [0x61, 0xc3]) {
        const bytes = Buffer.from([
          0x22,
          ...new Array<number>(at).fill(filler),
          byte,
          ...new Array<number>(at % 19).fill(filler),
          0x22,
        ]);
        const end = new StrictJsonLine(bytes).skipValue(0, 0);
        assert.equal(end === bytes.length, plain, `byte ${byte} at ${at} among ${filler}`);
      }
    }
  }
});

test('reads a line where it lies in a scan buffer, and nothing past its end', () => {
  const text = '["a", {"b": 1}] tail';
  const buffer = scanBuffer(64);
  buffer.write(text);
  const line = new StrictJsonLine(buffer);
  assert.equal(line.bytes, buffer);
  line.end = text.indexOf(']') + 1;
  assert.equal(line.skipValue(0, 0), line.end);
  // Cut inside the object: the rest of the buffer must not complete it.
  line.end = text.indexOf('1');
  assert.equal(line.skipValue(0, 0), FAILED);
});

test('a grown scan buffer keeps its bytes, and lines in it are read in place', () => {
  const small = scanBuffer(16);
  small.write('"0123456789abc"');
  const grown = growScanBuffer(small, 1 << 20);
  assert.equal(grown.length, 1 << 20);
  assert.equal(small.length, 0, 'the old view is left empty');
  assert.equal(grown.toString('latin1', 0, 15), '"0123456789abc"');
  grown.fill(0x61, 15);
  grown[grown.length - 1] = 0x22;
  grown[0] = 0x22;
  grown[14] = 0x61;
  assert.equal(new StrictJsonLine(grown).skipValue(0, 0), grown.length);
});
