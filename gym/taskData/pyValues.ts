// JSON values seen as Python sees them after json.loads: NeMo Gym 0.7.0 compares and names them
// with Python's rules, so its verdicts on a row depend on them.

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's type name of a parsed JSON value, as `type(x).__name__` prints it. */
export function pyTypeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'dict';
}

/** Python's `==` on parsed JSON: True == 1, 1 == 1.0, dicts by keys and values, lists in order. */
export function pyEquals(a: unknown, b: unknown): boolean {
  const scalar = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => pyEquals(item, b[i]));
  }
  if (isPlainObject(a) || isPlainObject(b)) {
    if (!isPlainObject(a) || !isPlainObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && pyEquals(a[k], b[k]));
  }
  return scalar(a) === scalar(b);
}
