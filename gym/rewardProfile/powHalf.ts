import table from './powHalf.json';

// Python's `n ** 0.5` for a count n, which NeMo Gym 0.7.0 divides a standard deviation by. It is
// glibc's pow, which now and then lands on the neighbour of the correctly rounded square root:
// powHalf.json lists where, below its limit (scripts/python-float-tables.sh). Beyond the limit the
// square root stands in, so a standard error's last digit may then differ from NeMo Gym's.

const UP = new Set(table.up);
const DOWN = new Set(table.down);

/** The double next to `x` (positive and finite) towards +∞ (`step` 1) or 0 (`step` -1). */
function neighbour(x: number, step: 1 | -1): number {
  const bits = new BigInt64Array(new Float64Array([x]).buffer);
  bits[0] = bits[0]! + BigInt(step);
  return new Float64Array(bits.buffer)[0]!;
}

export function pythonPowHalf(n: number): number {
  const root = Math.sqrt(n);
  if (UP.has(n)) return neighbour(root, 1);
  if (DOWN.has(n)) return neighbour(root, -1);
  return root;
}
