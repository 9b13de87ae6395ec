import assert from 'node:assert/strict';
import { test } from 'node:test';
import { random as randomSource } from '../../helpers/random';
import { floatsWithin, floatValue } from '../../../gym/verifier/floatText';

/** Python's rule with float() done by Number(), which rounds the same way. */
function exactlyWithin(a: string, b: string, threshold: number): boolean {
  return Math.abs(Number(b) - Number(a)) < threshold;
}

test('floatValue is float() for every spelling, inside and outside the fast path', () => {
  for (const token of [
    '0.1',
    '-0.0',
    '1.8966555162555228',
    '3.19897781781720902e-01',
    '1e22',
    '1e23',
    '9007199254740993.0',
    '1e400',
    '-1e-400',
    `${'9'.repeat(309)}.0`,
    'NaN',
    '-Infinity',
  ]) {
    assert.ok(Object.is(floatValue(token, 0, token.length), Number(token)), token);
  }
});

test('floatsWithin decides the float rule as exact arithmetic does, right at the threshold too', () => {
  const random = randomSource(99);
  const thresholds = [0, 1e-12, 1e-9, 1e-6, 1e-3, 0.5, 2.5];
  for (let run = 0; run < 100_000; run++) {
    const threshold = thresholds[run % thresholds.length] as number;
    const base = (random() - 0.5) * 10 ** Math.floor(random() * 12 - 4);
    // Differences spread around the threshold, down to the last digit of 17.
    const offset = run % 3 === 0 ? threshold : threshold * (1 + (random() - 0.5) * 10 ** -Math.floor(random() * 17));
    const a = base.toPrecision(17);
    const b = (base + (random() < 0.5 ? offset : -offset)).toPrecision(17 - Math.floor(random() * 3));
    for (const [x, y] of [
      [a, b],
      [b, a],
      [a, a],
    ] as const) {
      assert.equal(
        floatsWithin(x, 0, x.length, y, 0, y.length, threshold),
        exactlyWithin(x, y, threshold),
        `${x} ${y} ${threshold}`,
      );
    }
  }
});
