import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeAt, sameRegion } from '../../../gym/verifier/argumentText';

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
