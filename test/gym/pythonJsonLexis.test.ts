import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compareCodePoints,
  countPythonWords,
  forEachPythonWord,
  isBlank,
  pythonStrip,
} from '../../gym/pythonJsonLexis';

/** `s.split()`, collected. */
function pythonSplit(s: string): string[] {
  const words: string[] = [];
  forEachPythonWord(s, (word) => words.push(word));
  return words;
}

test('str.isspace set: Python whitespace that JavaScript misses, and the reverse', () => {
  const pythonOnly = '\u001c\u001d\u001e\u001f\u0085';
  assert.notEqual(pythonOnly.trim(), '');
  assert.ok(isBlank(pythonOnly));
  assert.ok(isBlank(' \t\n\r\v\f\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000'));
  for (const notSpace of ['\ufeff', '\u200b', '\u200c', '\u200d', '\u2060', '\u180e']) {
    assert.equal(isBlank(notSpace), false, JSON.stringify(notSpace));
  }
  assert.equal(''.trim(), '');
  assert.ok(isBlank(''));
});

test('split and strip follow the same set', () => {
  assert.deepEqual(pythonSplit('a\u0085b\u001cc\u3000d'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(pythonSplit('\ufeffa\u200bb\u180e'), ['\ufeffa\u200bb\u180e']);
  assert.deepEqual(pythonSplit(' \u2028 '), []);
  for (const text of ['', ' ', 'a', ' a\u0085b\u001c ', 'a  b\tc\u3000d\u200be']) {
    assert.equal(countPythonWords(text), pythonSplit(text).length, JSON.stringify(text));
  }
  assert.equal(pythonStrip('\u0085 task_id\t\u001f'), 'task_id');
  assert.equal(pythonStrip('\ufeffx\ufeff'), '\ufeffx\ufeff');
});

test('strings sort by code point, not by UTF-16 unit', () => {
  const names = ['\u{1F916}', '\uff5e', 'a', '_', 'B', 'tool2', 'tool10', ''];
  assert.deepEqual([...names].sort(), ['', 'B', '_', 'a', 'tool10', 'tool2', '\u{1F916}', '\uff5e']);
  assert.deepEqual([...names].sort(compareCodePoints), ['', 'B', '_', 'a', 'tool10', 'tool2', '\uff5e', '\u{1F916}']);
});
