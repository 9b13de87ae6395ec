import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  isPyDict,
  loadsPythonJson,
  MAX_NESTING_DEPTH,
  PythonJsonDecodeError,
  type PyValue,
} from '../../gym/pythonJson';
import { pyRepr } from '../../gym/validator/pythonRepr';

// Each case is a point where CPython's json.loads and JavaScript's JSON.parse part ways; the
// expected texts are CPython 3.11's (`repr(json.loads(text))` and `str(JSONDecodeError)`).

function decodeError(text: string): PythonJsonDecodeError {
  try {
    loadsPythonJson(text);
  } catch (error) {
    assert.ok(error instanceof PythonJsonDecodeError, String(error));
    return error;
  }
  assert.fail(`${JSON.stringify(text)} decoded`);
}

test('NaN and Infinity are floats, spelled exactly so', () => {
  assert.throws(() => JSON.parse('[NaN, Infinity, -Infinity]'));
  const decoded = loadsPythonJson('[NaN, Infinity, -Infinity]') as number[];
  assert.ok(Number.isNaN(decoded[0]));
  assert.deepEqual(decoded.slice(1), [Infinity, -Infinity]);
  assert.equal(pyRepr(decoded), '[nan, inf, -inf]');
  for (const text of ['nan', 'inf', '-NaN', '+Infinity', 'infinity', '-Inf']) {
    assert.equal(decodeError(text).message, 'Expecting value: line 1 column 1 (char 0)', text);
  }
});

test('duplicate keys: the last value wins in the first position; integer-like keys keep text order', () => {
  const text = '{"b": 1, "10": 2, "2": 3, "b": 4, "__proto__": 5, "toString": 6}';
  assert.deepEqual(Object.keys(JSON.parse(text)).slice(0, 3), ['2', '10', 'b']);
  const dict = loadsPythonJson(text);
  assert.ok(isPyDict(dict));
  assert.deepEqual([...dict.keys()], ['b', '10', '2', '__proto__', 'toString']);
  assert.equal(dict.get('b'), 4n);
  assert.equal(pyRepr(dict), "{'b': 4, '10': 2, '2': 3, '__proto__': 5, 'toString': 6}");
});

test('surrogate escapes: pairs combine, lone halves are kept', () => {
  assert.equal(loadsPythonJson('"\\ud83d\\ude00"'), '\u{1F600}');
  assert.equal(loadsPythonJson('"\\ud800x\\udc00"'), '\ud800x\udc00');
  assert.equal(loadsPythonJson('"\\udc00\\ud800"'), '\udc00\ud800');
  assert.equal(loadsPythonJson('"\\u00e9\\/\\n\\b\\f\\r\\t\\\\\\""'), 'é/\n\b\f\r\t\\"');
  assert.equal(decodeError('"\\ud800\\u12G4"').message, 'Invalid \\uXXXX escape: line 1 column 9 (char 8)');
  assert.equal(decodeError('"\\u12"').message, 'Invalid \\uXXXX escape: line 1 column 3 (char 2)');
});

test('numbers: the lexeme decides int or float; ints are exact at any size', () => {
  assert.equal(JSON.parse('9007199254740993'), 9007199254740992);
  const values = loadsPythonJson(
    '[1.0, 1, 1e16, 1E2, -0, -0.0, 9007199254740993, 1e400, 1e-400, 123456789012345678901234567890]',
  );
  assert.deepEqual(
    (values as PyValue[]).map((v) => typeof v),
    ['number', 'bigint', 'number', 'number', 'bigint', 'number', 'bigint', 'number', 'number', 'bigint'],
  );
  assert.equal(
    pyRepr(values),
    '[1.0, 1, 1e+16, 100.0, 0, -0.0, 9007199254740993, inf, 0.0, 123456789012345678901234567890]',
  );
  assert.equal(
    pyRepr(loadsPythonJson('[0.0001, 0.00001, 123456789012345.6, 1.5e300, 5e-324]')),
    '[0.0001, 1e-05, 123456789012345.6, 1.5e+300, 5e-324]',
  );
});

test('number lexemes Python refuses or cuts short', () => {
  const cases: Array<[string, string]> = [
    ['01', 'Extra data: line 1 column 2 (char 1)'],
    ['[01]', "Expecting ',' delimiter: line 1 column 3 (char 2)"],
    ['{"n": 012}', "Expecting ',' delimiter: line 1 column 8 (char 7)"],
    ['1e', 'Extra data: line 1 column 2 (char 1)'],
    ['1.', 'Extra data: line 1 column 2 (char 1)'],
    ['.5', 'Expecting value: line 1 column 1 (char 0)'],
    ['+1', 'Expecting value: line 1 column 1 (char 0)'],
    ['-', 'Expecting value: line 1 column 1 (char 0)'],
  ];
  for (const [text, message] of cases) assert.equal(decodeError(text).message, message, text);
});

test('whitespace is space, tab, LF and CR only; a BOM has its own message', () => {
  assert.deepEqual(loadsPythonJson(' \t\n\r[ \t\n\r1 \t\n\r] \t\n\r'), [1n]);
  assert.equal(
    decodeError('\ufeff{}').message,
    'Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)',
  );
  for (const space of ['\f', '\v', '\u00a0', '\u3000', '\u2028', '\u0085']) {
    assert.equal(decodeError(`${space}{}`).message, 'Expecting value: line 1 column 1 (char 0)', JSON.stringify(space));
    assert.equal(decodeError(`{}${space}`).message, 'Extra data: line 1 column 3 (char 2)', JSON.stringify(space));
  }
  // Inside strings DEL, U+2028 and U+2029 are plain characters; control characters are not.
  assert.equal(loadsPythonJson('"a\u007f\u2028\u2029"'), 'a\u007f\u2028\u2029');
  assert.equal(decodeError('"ab\ncd"').message, 'Invalid control character at: line 1 column 4 (char 3)');
});

test('positions count code points and lines as Python does', () => {
  assert.equal(decodeError('"\u{1F600}" x').message, 'Extra data: line 1 column 5 (char 4)');
  assert.equal(decodeError('["\u{1F600}",\n tru]').message, 'Expecting value: line 2 column 2 (char 7)');
  // A lone surrogate (possible inside decoded `arguments`) is one code point, not half a pair.
  assert.equal(decodeError('"\ud800" x').message, 'Extra data: line 1 column 5 (char 4)');
  const error = decodeError('{"a" 1}');
  assert.deepEqual([error.reason, error.line, error.column, error.position], ["Expecting ':' delimiter", 1, 6, 5]);
});

test('structural errors carry CPython wording', () => {
  const cases: Array<[string, string]> = [
    ['', 'Expecting value: line 1 column 1 (char 0)'],
    ['[1,]', 'Expecting value: line 1 column 4 (char 3)'],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes: line 1 column 8 (char 7)'],
    ["{'a': 1}", 'Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'],
    ['[1 2]', "Expecting ',' delimiter: line 1 column 4 (char 3)"],
    ['"abc', 'Unterminated string starting at: line 1 column 1 (char 0)'],
    ['"\u{1F600}\\x"', 'Invalid \\escape: line 1 column 3 (char 2)'],
    ['{"a": 1}\n{"a": 1}', 'Extra data: line 2 column 1 (char 9)'],
    ['{"a": 1} // c', 'Extra data: line 1 column 10 (char 9)'],
  ];
  for (const [text, message] of cases) assert.equal(decodeError(text).message, message, JSON.stringify(text));
});

test('nesting beyond the limit is a decode error, not a stack overflow', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  assert.ok(Array.isArray(loadsPythonJson(nested(MAX_NESTING_DEPTH))));
  assert.equal(decodeError(nested(MAX_NESTING_DEPTH + 1)).position, MAX_NESTING_DEPTH);
  assert.equal(
    decodeError(`${'{"a":'.repeat(MAX_NESTING_DEPTH + 1)}1${'}'.repeat(MAX_NESTING_DEPTH + 1)}`).reason,
    'Too deeply nested',
  );
});
