import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { random as randomSource } from '../../helpers/random';
import { compareArgumentTexts, UNDECIDED } from '../../../gym/verifier/argumentPair';
import { fixturesDir } from '../../helpers/fixtures';
import { decodedVerdict, mutate, randomText } from './argumentPairFuzz';

// The in-place verdict on two argument texts equals the decoding path's wherever it decides:
// on generated pairs, on the vectors' texts and on string literals. argumentPairVerdicts.test.ts has
// the verdicts themselves.

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
