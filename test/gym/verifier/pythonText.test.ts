import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stringsMatch } from '../../../gym/verifier/pythonText';

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
        assert.equal(stringsMatch(expected, actual, threshold), referenceMatch(expected, actual, threshold), `${JSON.stringify([expected, actual])} at ${threshold}`);
      }
    }
  }
});
