import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NumberColumn } from '../../../gym/rewardProfile/numberColumn';

test('a column reads back every value it was given, NaN where none was, across growth and widening', () => {
  const column = new NumberColumn();
  const values = new Map<number, number>([
    [0, 0],
    [1, 7],
    [10, 255],
    [20, 65535],
    [2000, 4294967294],
    [3000, 1],
  ]);
  for (const [i, x] of values) column.set(i, x);
  assert.ok(Number.isNaN(column.get(1500)));
  assert.ok(Number.isNaN(column.get(1 << 20)));
  // Values a 32-bit slot cannot hold widen the column without losing what it had.
  const wide = new Map<number, number>([
    [3001, 4294967295],
    [3002, -0],
    [3003, 0.5],
    [3004, -3],
    [3005, 2 ** 53],
  ]);
  for (const [i, x] of wide) column.set(i, x);
  for (const [i, x] of [...values, ...wide])
    assert.ok(Object.is(column.get(i), x), `${i}: ${column.get(i)} is not ${x}`);
  assert.ok(Number.isNaN(column.get(1500)));
});
