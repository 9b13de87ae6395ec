// Python's `json.dumps` output (default separators, `ensure_ascii=True`, optional `indent`) and
// Python's float `round`, for files and counts that must match what NeMo Gym computes in Python.

export interface PythonJsonDumpsOptions {
  indent?: number;
  /** Object keys whose numeric values are Python floats; every other number is written as parsed. */
  floatKeys?: ReadonlySet<string>;
}

/** Python's `repr(float)`: shortest round-trip digits, fixed notation for 1e-4 ≤ |x| < 1e16. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let body: string;
  if (exp < 0) body = `0.${'0'.repeat(-exp - 1)}${digits}`;
  else if (digits.length > exp + 1) body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  else body = `${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return negative ? `-${body}` : body;
}

function pythonIntOrFloat(x: number): string {
  return Number.isInteger(x) && Math.abs(x) < 1e16 ? String(x) : pythonFloatRepr(x);
}

/** Python's `round(x, ndigits)` on a float: exact decimal rounding of the binary value, ties to even. */
export function pythonRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biasedExp = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biasedExp === 0 ? fraction : fraction | (1n << 52n);
  const exp2 = (biasedExp === 0 ? 1 : biasedExp) - 1075;
  if (exp2 >= 0) return x;
  const numerator = mantissa * 10n ** BigInt(ndigits);
  const denominator = 1n << BigInt(-exp2);
  let quotient = numerator / denominator;
  const twiceRemainder = 2n * (numerator % denominator);
  if (twiceRemainder > denominator || (twiceRemainder === denominator && quotient % 2n === 1n)) quotient += 1n;
  return Number(`${negative ? '-' : ''}${quotient}e-${ndigits}`);
}

const NON_PRINTABLE_ASCII = /[^\x20-\x7e]/g;

function pythonString(s: string): string {
  return JSON.stringify(s).replace(NON_PRINTABLE_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Python's `json.dumps(value)`. As in `orjsonDumps`, a `Map` (a PyDict) carries Python's types to any
 * depth: its `number`s are floats and its `bigint`s ints; elsewhere integral numbers are ints unless
 * `floatKeys` names their key.
 */
export function pythonJsonDumps(value: unknown, opts: PythonJsonDumpsOptions = {}): string {
  const { indent, floatKeys } = opts;
  const itemSep = indent === undefined ? ', ' : ',';
  const render = (v: unknown, depth: number, asFloat: boolean, typed: boolean): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return asFloat || typed ? pythonFloatRepr(v) : pythonIntOrFloat(v);
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'string') return pythonString(v);
    const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (depth + 1))}`;
    const close = indent === undefined ? '' : `\n${' '.repeat(indent * depth)}`;
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${v.map((item) => pad + render(item, depth + 1, false, typed)).join(itemSep)}${close}]`;
    }
    const isDict = v instanceof Map;
    const entries: [string, unknown][] = isDict
      ? [...(v as Map<string, unknown>)]
      : Object.entries(v as Record<string, unknown>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    const body = entries.map(
      ([k, item]) => `${pad}${pythonString(k)}: ${render(item, depth + 1, floatKeys?.has(k) ?? false, typed || isDict)}`,
    );
    return `{${body.join(itemSep)}${close}}`;
  };
  return render(value, 0, false, false);
}

/**
 * `orjson.dumps` of a Python float, which NeMo Gym writes its JSONL and metrics with: shortest
 * round-trip digits like `repr`, but fixed notation only for 1e-5 ≤ |x| < 1e16, exponents without
 * padding (`1e-6`, `1e+16`), and NaN/±Infinity as `null`.
 */
export function orjsonFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -5 || exp >= 16) return `${mantissa}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
  // JS prints these ranges in fixed notation too; only the `.0` of integral values is missing.
  const fixed = String(x);
  return /[.e]/.test(fixed) ? fixed : `${fixed}.0`;
}

/** JSON text already in orjson's compact form, written as it is by orjsonDumps (compact only). */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * `orjson.dumps(value)` (compact, UTF-8, `OPT_INDENT_2` with `indent: 2`) of a Python value. Python's
 * types are read from the value where it carries them: a `Map` (as `loadsPythonJson` decodes) is a
 * dict whose `number`s are floats and `bigint`s ints, to any depth. Plain JS objects and arrays
 * outside such a dict have lost the distinction, so their numbers are ints when integral.
 */
export function orjsonDumps(value: unknown, opts: { indent?: 2 } = {}): string {
  const indent = opts.indent;
  const render = (v: unknown, depth: number, typed: boolean): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number') return typed || !Number.isInteger(v) ? orjsonFloatRepr(v) : String(v);
    if (typeof v === 'string') return JSON.stringify(v);
    if (v instanceof RawJson) {
      if (indent !== undefined) throw new Error('raw JSON text cannot be indented');
      return v.text;
    }
    const pad = indent === undefined ? '' : `\n${' '.repeat(indent * (depth + 1))}`;
    const close = indent === undefined ? '' : `\n${' '.repeat(indent * depth)}`;
    const sep = indent === undefined ? ':' : ': ';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${v.map((item) => pad + render(item, depth + 1, typed)).join(',')}${close}]`;
    }
    const isDict = v instanceof Map;
    const entries: [string, unknown][] = isDict
      ? [...(v as Map<string, unknown>)]
      : Object.entries(v as Record<string, unknown>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    const body = entries.map(([k, item]) => `${pad}${JSON.stringify(k)}${sep}${render(item, depth + 1, typed || isDict)}`);
    return `{${body.join(',')}${close}}`;
  };
  return render(value, 0, false);
}
