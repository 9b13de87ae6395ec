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
      ([k, item]) =>
        `${pad}${pythonString(k)}: ${render(item, depth + 1, floatKeys?.has(k) ?? false, typed || isDict)}`,
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
  const magnitude = Math.abs(x);
  // JS prints this range in fixed notation with the same shortest digits; only the `.0` of
  // integral values is missing. Checked first because nearly every metric falls in it.
  if (magnitude >= 1e-5 && magnitude < 1e16) return Number.isInteger(x) ? `${x}.0` : String(x);
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
}

/** JSON text already in orjson's compact form, written as it is by orjsonDumps (compact only). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Characters JSON.stringify escapes (lone surrogates included), so other strings are quoted as they are. */
// eslint-disable-next-line no-control-regex -- control characters are among what it looks for
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

function quoted(s: string): string {
  return ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * Appends orjson's text of a value to one string. Appending, rather than joining the parts each
 * level returns, matters because the reward profile, the aggregate metrics and every local-profile
 * request are written through here: V8 concatenates into a rope without copying, while map/join
 * builds an array and a string per object and array.
 */
class OrjsonText {
  text = '';
  /** `\n` and the indent of each depth, built as they are first needed. */
  private readonly breaks: string[] = [];

  constructor(private readonly indent: number | undefined) {}

  private lineBreak(depth: number): string {
    return (this.breaks[depth] ??= `\n${' '.repeat(this.indent! * depth)}`);
  }

  /** `typed`: inside a PyDict, where a `number` is a Python float even when integral. */
  value(v: unknown, depth: number, typed: boolean): void {
    switch (typeof v) {
      case 'string':
        this.text += quoted(v);
        return;
      case 'number':
        this.text += typed || !Number.isInteger(v) ? orjsonFloatRepr(v) : String(v);
        return;
      case 'boolean':
        this.text += v ? 'true' : 'false';
        return;
      case 'bigint':
        this.text += v.toString();
        return;
      case 'undefined':
        this.text += 'null';
        return;
    }
    if (v === null) this.text += 'null';
    else if (Array.isArray(v)) this.list(v, depth, typed);
    else if (v instanceof Map) this.dict(v as Map<string, unknown>, depth);
    else if (v instanceof RawJson) {
      if (this.indent !== undefined) throw new Error('raw JSON text cannot be indented');
      this.text += v.text;
    } else this.object(v as Record<string, unknown>, depth, typed);
  }

  private list(items: readonly unknown[], depth: number, typed: boolean): void {
    if (items.length === 0) {
      this.text += '[]';
      return;
    }
    const pad = this.indent === undefined ? '' : this.lineBreak(depth + 1);
    for (let i = 0; i < items.length; i++) {
      this.text += (i === 0 ? '[' : ',') + pad;
      this.value(items[i], depth + 1, typed);
    }
    this.text += this.indent === undefined ? ']' : `${this.lineBreak(depth)}]`;
  }

  /** A PyDict: every entry is written, and its numbers are floats to any depth. */
  private dict(entries: Map<string, unknown>, depth: number): void {
    let first = true;
    for (const [key, item] of entries) {
      this.key(key, first, depth);
      first = false;
      this.value(item, depth + 1, true);
    }
    this.close(first, depth);
  }

  /** A plain object: as JSON.stringify, keys whose value is undefined are left out. */
  private object(entries: Record<string, unknown>, depth: number, typed: boolean): void {
    let first = true;
    for (const key of Object.keys(entries)) {
      const item = entries[key];
      if (item === undefined) continue;
      this.key(key, first, depth);
      first = false;
      this.value(item, depth + 1, typed);
    }
    this.close(first, depth);
  }

  private key(key: string, first: boolean, depth: number): void {
    const pad = this.indent === undefined ? '' : this.lineBreak(depth + 1);
    this.text += `${first ? '{' : ','}${pad}${quoted(key)}${this.indent === undefined ? ':' : ': '}`;
  }

  private close(empty: boolean, depth: number): void {
    if (empty) this.text += '{}';
    else this.text += this.indent === undefined ? '}' : `${this.lineBreak(depth)}}`;
  }
}

/**
 * `orjson.dumps(value)` (compact, UTF-8, `OPT_INDENT_2` with `indent: 2`) of a Python value. Python's
 * types are read from the value where it carries them: a `Map` (as `loadsPythonJson` decodes) is a
 * dict whose `number`s are floats and `bigint`s ints, to any depth. Plain JS objects and arrays
 * outside such a dict have lost the distinction, so their numbers are ints when integral. `depth`
 * indents the text as a value that many levels deep in an indented document (its first line is
 * left to the caller).
 */
export function orjsonDumps(value: unknown, opts: { indent?: 2; depth?: number } = {}): string {
  const out = new OrjsonText(opts.indent);
  out.value(value, opts.depth ?? 0, false);
  return out.text;
}
