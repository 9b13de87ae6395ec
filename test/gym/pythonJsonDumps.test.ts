import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orjsonDumps, orjsonFloatRepr, pythonFloatRepr, pythonJsonDumps, pythonRound } from '../../gym/pythonJsonDumps';

test('pythonFloatRepr matches Python repr(float)', () => {
  const cases: [number, string][] = [
    [14, '14.0'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.1, '0.1'],
    [2342.79, '2342.79'],
    [-1.5, '-1.5'],
    [1e-4, '0.0001'],
    [1e-5, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e+16'],
    [1.25e22, '1.25e+22'],
    [123456789.125, '123456789.125'],
    [NaN, 'NaN'],
    [Infinity, 'Infinity'],
  ];
  for (const [x, expected] of cases) assert.equal(pythonFloatRepr(x), expected, String(x));
});

test('pythonRound rounds the exact binary value, ties to even, like Python round()', () => {
  const cases: [number, number, number][] = [
    [0.125, 2, 0.12],
    [0.375, 2, 0.38],
    [2.675, 2, 2.67], // binary value is below the tie
    [1.005, 2, 1.0],
    [2.5, 0, 2],
    [3.5, 0, 4],
    [-0.125, 2, -0.12],
    [0.8366600265340756, 3, 0.837],
    [2342.7925, 2, 2342.79],
    [17.95, 2, 17.95],
    [5, 3, 5],
  ];
  for (const [x, nd, expected] of cases) assert.equal(pythonRound(x, nd), expected, `round(${x}, ${nd})`);
});

test('pythonJsonDumps uses Python separators and ensure_ascii escapes', () => {
  assert.equal(
    pythonJsonDumps({ a: [1, 2.5, 'x y'], b: null, c: true }),
    '{"a": [1, 2.5, "x y"], "b": null, "c": true}',
  );
  assert.equal(pythonJsonDumps('é\u007f\n😀'), '"\\u00e9\\u007f\\n\\ud83d\\ude00"');
  assert.equal(pythonJsonDumps({ e: {}, f: [] }), '{"e": {}, "f": []}');
});

test('pythonJsonDumps with indent matches json.dump(..., indent=4)', () => {
  const text = pythonJsonDumps(
    { n: 5, s: { Average: 14, Min: 1.5 }, l: [1] },
    { indent: 4, floatKeys: new Set(['Average', 'Min']) },
  );
  assert.equal(
    text,
    '{\n    "n": 5,\n    "s": {\n        "Average": 14.0,\n        "Min": 1.5\n    },\n    "l": [\n        1\n    ]\n}',
  );
});

test('orjsonFloatRepr writes fixed notation exactly for 1e-5 <= |x| < 1e16, as orjson does', () => {
  const cases: [number, string][] = [
    [1e-5, '0.00001'],
    [9.999999999999999e-6, '9.999999999999999e-6'],
    [-1e-5, '-0.00001'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e+16'],
    [-3, '-3.0'],
    [0.1, '0.1'],
    [-0, '-0.0'],
    [NaN, 'null'],
    [-Infinity, 'null'],
  ];
  for (const [x, expected] of cases) assert.equal(orjsonFloatRepr(x), expected, String(x));
});

test('orjsonDumps keeps Python kinds from PyDicts, drops undefined object values and escapes as JSON', () => {
  const value = {
    a: undefined,
    b: [undefined, 1, 2.5],
    c: new Map<string, unknown>([
      ['f', 1],
      ['i', 2n],
      ['n', { x: 3 }],
    ]),
    'q"\n': 'é\u0001😀',
  };
  assert.equal(orjsonDumps(value), '{"b":[null,1,2.5],"c":{"f":1.0,"i":2,"n":{"x":3.0}},"q\\"\\n":"é\\u0001😀"}');
  assert.equal(orjsonDumps({ e: {}, l: [] }, { indent: 2 }), '{\n  "e": {},\n  "l": []\n}');
});

test('orjsonDumps with a depth indents as a value that deep in an indented document', () => {
  const value = { a: [1, { b: 2 }] };
  assert.equal(
    orjsonDumps(value, { indent: 2, depth: 2 }),
    orjsonDumps(value, { indent: 2 }).replaceAll('\n', '\n    '),
  );
});
