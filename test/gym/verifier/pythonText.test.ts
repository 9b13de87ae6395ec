import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACTUAL_LITERAL_INVALID, quotedRead, quotedStringsMatch, stringsMatch } from '../../../gym/verifier/pythonText';

// Python's `str.isspace()` below U+0080.
const PYTHON_ASCII_SPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20]);

/** NeMo Gym's rule for ASCII strings, written plainly: `s.lower().split()` and a multiset overlap. */
function referenceMatch(expected: string, actual: string, threshold: number): boolean {
  const words = (s: string) => {
    const spaced = [...s.toLowerCase()].map((c) => (PYTHON_ASCII_SPACE.has(c.charCodeAt(0)) ? ' ' : c)).join('');
    return spaced.split(' ').filter((word) => word.length > 0);
  };
  const expectedWords = words(expected);
  const actualWords = words(actual);
  if (expectedWords.length < 2 || actualWords.length < 2) return expected === actual;
  const remaining = new Map<string, number>();
  for (const word of expectedWords) remaining.set(word, (remaining.get(word) ?? 0) + 1);
  let shared = 0;
  for (const word of actualWords) {
    const left = remaining.get(word) ?? 0;
    if (left > 0) {
      shared++;
      remaining.set(word, left - 1);
    }
  }
  return shared / (expectedWords.length + actualWords.length) >= threshold;
}

test('stringsMatch splits and lower-cases every ASCII code unit as Python does', () => {
  const thresholds = [0, 0.1, 0.3, 0.5, 0.6];
  for (let code = 0; code < 0x80; code++) {
    const unit = String.fromCharCode(code);
    const pairs: [string, string][] = [
      [`paris${unit}Berlin`, 'PARIS berlin'],
      [`paris${unit}Berlin`, `Paris${unit}berlin`],
      [`a${unit}b c`, 'A B c'],
      [`x${unit}`, 'x'],
      [`${unit}`, `${unit}`],
      [`Q${unit}${unit}q`, `q q`],
      ['new york city', `NEW${unit}YORK`],
    ];
    for (const [expected, actual] of pairs) {
      for (const threshold of thresholds) {
        assert.equal(
          stringsMatch(expected, actual, threshold),
          referenceMatch(expected, actual, threshold),
          `${JSON.stringify([expected, actual])} at ${threshold}`,
        );
      }
    }
  }
});

test('quotedStringsMatch reads the actual literal to its closing quote, or calls it invalid', () => {
  const expected = '"new york"';
  const read = (actual: string, threshold: number) => {
    const verdict = quotedStringsMatch(expected, 1, expected.length - 1, actual, 1, false, threshold);
    return verdict === ACTUAL_LITERAL_INVALID ? verdict : { verdict, end: quotedRead.actualEnd };
  };
  assert.deepEqual(read('"York\\tNEW", 1', 0.5), { verdict: 1, end: 11 });
  assert.deepEqual(read('"York\\tNEW", 1', 0.51), { verdict: 0, end: 11 });
  // Past the ASCII path (an escape that is not whitespace, a non-ASCII letter) the same verdicts.
  assert.deepEqual(read('"\\u0059ork\\tNEW"', 0.5), { verdict: 1, end: 16 });
  assert.deepEqual(read('"Yörk NEW"', 0.25), { verdict: 1, end: 10 });
  assert.deepEqual(read('"Yörk NEW"', 0.26), { verdict: 0, end: 10 });
  for (const broken of ['"new york', '"new york\\', '"new\tyork"', '"new\u0001york"', '"new\\x"', '"new\\u12"']) {
    assert.equal(read(broken, 0.5), ACTUAL_LITERAL_INVALID, JSON.stringify(broken));
  }
});

test('quotedStringsMatch at a threshold the word counts settle splits two words and still checks the rest', () => {
  const read = (expected: string, actual: string, threshold: number) => {
    const verdict = quotedStringsMatch(expected, 1, expected.length - 1, actual, 1, false, threshold);
    return verdict === ACTUAL_LITERAL_INVALID ? verdict : { verdict, end: quotedRead.actualEnd };
  };
  // At or below 0 any two words a side pass; above 0.5 none do; below two words only identity.
  for (const [threshold, twoWords] of [
    [0, 1],
    [-1, 1],
    [0.6, 0],
    [1, 0],
  ] as const) {
    assert.deepEqual(read('"new york"', '"Paris is \\u00e9t\\u00e9 \\"x\\" Lyon", 1', threshold), {
      verdict: twoWords,
      end: 35,
    });
    assert.deepEqual(read('"new york"', '"Paris\\u0020\\u00e9t\\u00e9"', threshold), { verdict: twoWords, end: 26 });
    assert.deepEqual(read('"new york"', '"Paris\\u00e9t\\u00e9"', threshold), { verdict: 0, end: 20 });
    assert.deepEqual(read('"new york"', '" Paris\\t"', threshold), { verdict: 0, end: 10 });
    assert.deepEqual(read('"new \\u00e9t\\u00e9"', '"two words"', threshold), { verdict: twoWords, end: 11 });
    assert.deepEqual(read('"one"', '"two words"', threshold), { verdict: 0, end: 11 });
    // The words past the second are not split, but their literal is still read for its validity.
    for (const broken of [
      '"new york',
      '"new york\\',
      '"new york\u0001"',
      '"new york \\x"',
      '"new york big\u001f city"',
    ]) {
      assert.equal(
        read('"new york"', broken, threshold),
        ACTUAL_LITERAL_INVALID,
        `${JSON.stringify(broken)} at ${threshold}`,
      );
    }
  }
});
