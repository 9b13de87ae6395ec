import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareArgumentTexts, UNDECIDED } from '../../../gym/verifier/argumentPair';
import { decodedVerdict } from './argumentPairFuzz';

// Which verdict a pair of argument texts gets in place: decode errors, the order of mismatches and a
// text repeated exactly, or UNDECIDED where the decoding path must decide.

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
