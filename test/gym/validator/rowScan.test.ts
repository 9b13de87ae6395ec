import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scanRow, type Members, type Selector } from '../../../gym/validator/rowScan';
import { StrictJsonLine } from '../../../gym/validator/strictJson';

const members = (entries: [string, Selector][]): Members => ({ keys: new Map(entries) });
const tool = members([
  ['name', 'value'],
  ['function', members([['name', 'value']])],
]);
const selector = members([
  [
    'params',
    members([
      ['input', 'length'],
      ['tools', { each: tool }],
      ['choice', 'value'],
      ['extra', 'present'],
    ]),
  ],
  ['action', 'value'],
  ['seen', 'present'],
  ['caf\u00e9', 'value'],
  ['__proto__', 'value'],
]);

/** What the selector builds, read off JSON.parse's full value: the reference for scanRow. */
function expected(value: unknown, wanted: Selector): unknown {
  if (wanted === 'value') return value;
  if (wanted === 'present') return value === null ? null : true;
  if (typeof wanted === 'object' && 'keys' in wanted) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    // An ordinary object, as JSON.parse makes, whose "__proto__" is an own member.
    const built: Record<string, unknown> = {};
    for (const [key, inner] of wanted.keys) {
      if (!Object.hasOwn(value, key)) continue;
      Object.defineProperty(built, key, {
        value: expected((value as Record<string, unknown>)[key], inner),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return built;
  }
  if (!Array.isArray(value)) return value;
  return wanted === 'length'
    ? new Array(value.length)
    : value.map((element) => expected(element, (wanted as { each: Selector }).each));
}

/** Scans `row` where it lies in a larger buffer, with other bytes before it and `after` it. */
function scan(row: string, after = '\n{}'): Record<string, unknown> | undefined {
  const before = Buffer.from('{"a": [');
  const bytes = Buffer.from(row);
  const line = new StrictJsonLine(Buffer.concat([before, bytes, Buffer.from(after)]));
  line.end = before.length + bytes.length;
  return scanRow(line, before.length, selector);
}

const ROWS = [
  '{"params": {"input": [1, {"a": [2]}, "x"], "tools": [{"name": "f", "type": "function", "parameters": {"name": "no"}}, {"function": {"name": "g", "strict": true}}, 7, []], "choice": "auto"}, "action": {"type": "message", "content": "hi"}}',
  '{"params": {"input": {"not": "a list"}, "tools": "nor this", "choice": {"type": "tool"}}, "action": null}',
  '{"params": [1, 2], "action": [1], "caf\u00e9": "\u00fcber", "\\u0063af\\u00e9": "escaped key wins, coming last"}',
  '{"p\\u0061rams": {"tools": [{"n\\u0061me": "escaped", "name": "dup", "name": "last"}], "input": []}, "__proto__": {"polluted": true}}',
  ' {"action": "a\\"b\\u00e9\\ud800", "action": -1.5e3, "params": {"choice": null, "choice": false}} ',
  '{"other": {"params": {"input": [1]}}, "params": {}}',
  '{"seen": null, "params": {"extra": {"a": null}, "choice": true}, "action": false}',
  '{"seen": [null], "params": {"extra": null, "choice": -0.0}, "action": "x", "seen": "last"}',
  '{"seen": 0, "params": {"extra": false, "choice": null}, "action": true, "seen": null}',
];

test('builds exactly the selected parts of what JSON.parse makes of the row, and only those', () => {
  for (const row of ROWS) {
    const scanned = scan(row);
    assert.ok(scanned !== undefined, row);
    assert.deepEqual(scanned, expected(JSON.parse(row), selector), row);
  }
});

test('an input list is built as its length alone', () => {
  const scanned = scan('{"params": {"input": [{"role": "user"}, 2, 3]}}') as { params: { input: unknown[] } };
  assert.equal(scanned.params.input.length, 3);
  assert.equal(scanned.params.input[0], undefined);
});

test('strings of every length, an escape or a non-ASCII character at every offset, build as JSON.parse reads them', () => {
  for (let length = 0; length < 40; length++) {
    for (const stop of ['\\"', '\\u00e9', '\u00e9', '\\\\', '\\n']) {
      for (let at = 0; at <= length; at++) {
        const text = 'x'.repeat(at) + stop + 'y'.repeat(length - at);
        const row = `{"action": "${text}", "params": {"choice": "${text}"}}`;
        assert.deepEqual(scan(row), expected(JSON.parse(row), selector), row);
      }
    }
  }
});

test('declines a line that is not one strict-JSON object', () => {
  const lines = ['', '   ', '[1]', '"row"', '{"a": NaN}', '{"a": 1} {}', '\ufeff{}', '\u00a0{}'];
  // A raw control character or a lone quote anywhere in a long string, wherever it falls in a word.
  for (let at = 0; at < 12; at++) {
    for (const bad of ['\u0000', '\u001f', '\t', '\u00e9\u0001', '\\x'])
      lines.push(`{"action": "${'a'.repeat(at)}${bad}${'b'.repeat(20)}"}`);
    lines.push(`{"action": "${'a'.repeat(at)}`);
  }
  for (const line of lines) assert.equal(scan(line), undefined, line);
});

test('declines a cut-off row even when the bytes after its end would complete it', () => {
  const cut: [string, string][] = [
    ['{"a": 1', '}'],
    ['{"a": 1 ', '}'],
    ['{"a": [1', ']}'],
    ['{"a": "x', '"}'],
    ['{"a": tru', 'e}'],
    ['{"a": 1.', '5}'],
    ['{"a": 1e', '5}'],
    ['{"a": -', '1}'],
    ['{"a":', ' 1}'],
    ['{"a"', ': 1}'],
    ['{"a', '": 1}'],
    ['{', '}'],
    ['{"action": "\\u00', 'e9"}'],
    ['{"params": {"input": [', ']}}'],
  ];
  for (const [line, rest] of cut) {
    assert.ok(JSON.parse(line + rest), line + rest);
    assert.equal(scan(line, rest), undefined, line);
  }
});
