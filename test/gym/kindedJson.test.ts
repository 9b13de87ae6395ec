import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { jsonLine } from '../../gym/jsonl';
import { kindedFrom, withEntries, withPythonFloats } from '../../gym/kindedJson';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

// Every line read and written back must come out as NeMo Gym's `orjson.dumps(orjson.loads(line))`,
// whichever path it takes: JSON.parse alone when no lexeme needs more, the scanner otherwise.

const NUMBERS = [
  '0',
  '-0',
  '7',
  '1.0',
  '-0.0',
  '0.0',
  '10.00',
  '0.50',
  '1.5',
  '2.5e0',
  '1e5',
  '1E5',
  '1e-5',
  '1e-05',
  '1e-6',
  '5e-7',
  '1.5e-6',
  '0.000001',
  '0.0000015',
  '1e16',
  '1e21',
  '1e22',
  '1.7976931348623157e308',
  '9007199254740993',
  '12345678901234567890',
  '18446744073709551615',
  '18446744073709551616',
  '-9223372036854775808',
  '-9223372036854775809',
  '123456789012345678901',
  '0.30000000000000004',
  '100',
  '1234567890123456',
];

/** Each number in the places a lexeme can sit in a line (a JSON object): a value, list items, after whitespace, nested. */
function linesFor(n: string): string[] {
  return [
    `{"v":${n}}`,
    `{"a": [${n}, ${n}], "b": {"c":\t${n}}}`,
    `{"l":[[${n}]]}`,
    `{"s":"text ${n} stays text","n":${n},"k":{"2":${n},"1":0}}`,
  ];
}
const LINES = [
  ...NUMBERS.flatMap(linesFor),
  '{"only":"plain","x":0.5,"ids":["4e2f","1.0"],"nested":{"a":[1,2,{"b":-3}]}}',
  '{"dup":1,"dup":2.0,"other":3}',
  '{"t":"ends in a backslash \\\\","v":1.0}',
  '{"t":"an escaped quote \\" then","10":1}',
  '{"unicode":"h\\u00e9llo \\u2028 \\ud83d\\ude00","ctl":"\\u0001\\n"}',
];

function orjsonRoundTrip(lines: string[]): string[] {
  const python = path.join(ensureNemoGym().binDir, 'python');
  const script =
    'import sys, orjson\nfor line in sys.stdin.buffer.read().split(b"\\n")[:-1]:\n    sys.stdout.buffer.write(orjson.dumps(orjson.loads(line)) + b"\\n")\n';
  return execFileSync(python, ['-c', script], { input: `${lines.join('\n')}\n`, encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);
}

test('a line read with kindedFrom and written with jsonLine has orjson round-trip bytes', { timeout: 300_000 }, () => {
  const theirs = orjsonRoundTrip(LINES);
  LINES.forEach((line, i) => {
    assert.equal(jsonLine(kindedFrom(line, JSON.parse(line))), `${theirs[i]}\n`, line);
  });
});

test('lines whose numbers JSON.parse keeps are parsed once', () => {
  const clean = [
    '{"x":0.5,"n":12,"s":"version 1.0, \\"2e5\\" 12345678901234567","ids":["4e2f"],"01":0}',
    '[1,2,-3.25]',
    '{"a":{"b":[0.1]}}',
  ];
  for (const line of clean) {
    const plain: unknown = JSON.parse(line);
    assert.equal(kindedFrom(line, plain), plain, line);
  }
});

test('withEntries assigns as Python does and keeps the kinds of either side', () => {
  const row = kindedFrom('{"a":1.0,"b":2}', JSON.parse('{"a":1.0,"b":2}'));
  assert.equal(jsonLine(withEntries(row as Map<string, never>, { b: 3, c: 4 })), '{"a":1.0,"b":3,"c":4}\n');
  assert.equal(jsonLine(withEntries({ a: 1, b: 2 }, { a: 5 })), '{"a":5,"b":2}\n');
  assert.equal(jsonLine(withEntries({ a: 1 }, new Map([['r', 1]]))), '{"a":1,"r":1.0}\n');
});

test('withPythonFloats makes only the named integral numbers floats', () => {
  assert.equal(
    jsonLine({ p: withPythonFloats({ r: 1, n: 1, h: 0.5, z: null }, ['r', 'h', 'z']), q: 2 }),
    '{"p":{"r":1.0,"n":1,"h":0.5,"z":null},"q":2}\n',
  );
});
