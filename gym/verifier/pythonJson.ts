import { BACKSLASH, hexValue, isDigit, isJsonWhitespace, QUOTE, SIMPLE_ESCAPES } from '../pythonJsonLexis';

// A JSON decoder with the semantics of CPython's `json.loads` (default arguments), because NeMo Gym
// decodes tool-call arguments that way and the verdict depends on what it accepts and on the Python
// type each lexeme becomes. `JSON.parse` differs on every point that matters here: it rejects
// NaN/Infinity, loses integers beyond 2^53, cannot tell `1.0` from `1`, and reorders integer-like
// object keys.

/**
 * A decoded value as Python sees it: `bigint` is a Python int, `number` a Python float, `boolean` a
 * Python bool, `Map` a dict (insertion-ordered, so duplicate keys keep their first position).
 */
export type PyValue = null | boolean | bigint | number | string | PyValue[] | PyDict;
export type PyDict = Map<string, PyValue>;

export class PythonJsonDecodeError extends Error {
  constructor(
    reason: string,
    readonly position: number,
  ) {
    super(`${reason}: char ${position}`);
    this.name = 'PythonJsonDecodeError';
  }
}

// CPython overflows its C stack (RecursionError) near 1000 levels and NeMo Gym does not catch that,
// so the reference has no verdict there; we report a decode error instead of overflowing ours.
const MAX_NESTING_DEPTH = 2000;


// Spelled exactly so: Python accepts no other casing or sign for the non-finite floats.
const CONSTANTS: ReadonlyArray<readonly [string, PyValue]> = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
];

class Decoder {
  private pos = 0;

  constructor(private readonly text: string) {}

  decode(): PyValue {
    if (this.text.charCodeAt(0) === 0xfeff) throw new PythonJsonDecodeError('Unexpected UTF-8 BOM', 0);
    this.skipWhitespace();
    const value = this.value(0);
    this.skipWhitespace();
    if (this.pos !== this.text.length) throw new PythonJsonDecodeError('Extra data', this.pos);
    return value;
  }

  private skipWhitespace(): void {
    while (this.pos < this.text.length && isJsonWhitespace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  private fail(reason: string): never {
    throw new PythonJsonDecodeError(reason, this.pos);
  }

  private value(depth: number): PyValue {
    if (this.pos >= this.text.length) this.fail('Expecting value');
    const code = this.text.charCodeAt(this.pos);
    switch (code) {
      case QUOTE:
        return this.string();
      case 0x7b:
        return this.object(depth + 1);
      case 0x5b:
        return this.array(depth + 1);
    }
    const constant = this.constant();
    if (constant !== undefined) return constant.value;
    if (code === 0x2d || isDigit(code)) return this.number();
    return this.fail('Expecting value');
  }

  private constant(): { value: PyValue } | undefined {
    for (const [word, value] of CONSTANTS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return { value };
      }
    }
    return undefined;
  }

  private number(): bigint | number {
    const text = this.text;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === 0x2d) i++;
    const first = text.charCodeAt(i);
    if (first === 0x30) {
      i++;
    } else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(text.charCodeAt(i))) i++;
    } else {
      this.fail('Expecting value');
    }
    let isFloat = false;
    if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
      i += 2;
      while (isDigit(text.charCodeAt(i))) i++;
      isFloat = true;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      // Python only takes the exponent when digits follow; otherwise the number ends before `e`
      // and the leftover `e` fails later as unexpected text.
      let j = i + 1;
      const sign = text.charCodeAt(j);
      if (sign === 0x2b || sign === 0x2d) j++;
      if (isDigit(text.charCodeAt(j))) {
        while (isDigit(text.charCodeAt(j))) j++;
        i = j;
        isFloat = true;
      }
    }
    this.pos = i;
    const lexeme = text.slice(start, i);
    return isFloat ? Number(lexeme) : BigInt(lexeme);
  }

  private string(): string {
    const text = this.text;
    let i = this.pos + 1;
    let out = '';
    let chunkStart = i;
    for (;;) {
      if (i >= text.length) throw new PythonJsonDecodeError('Unterminated string starting at', this.pos);
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        out += text.slice(chunkStart, i);
        this.pos = i + 1;
        return out;
      }
      if (code < 0x20) throw new PythonJsonDecodeError('Invalid control character at', i);
      if (code !== BACKSLASH) {
        i++;
        continue;
      }
      out += text.slice(chunkStart, i);
      const escape = text[i + 1];
      if (escape === undefined) throw new PythonJsonDecodeError('Unterminated string starting at', this.pos);
      if (escape === 'u') {
        const unit = this.hex4(i + 2);
        i += 6;
        // A high surrogate followed by an escaped low surrogate is one character; any other
        // surrogate stays as a lone code point, which Python accepts.
        if (unit >= 0xd800 && unit <= 0xdbff && text.charCodeAt(i) === BACKSLASH && text[i + 1] === 'u') {
          const low = this.hex4(i + 2);
          if (low >= 0xdc00 && low <= 0xdfff) {
            out += String.fromCharCode(unit, low);
            i += 6;
            chunkStart = i;
            continue;
          }
        }
        out += String.fromCharCode(unit);
        chunkStart = i;
        continue;
      }
      const simple = SIMPLE_ESCAPES[escape];
      if (simple === undefined) throw new PythonJsonDecodeError('Invalid \\escape', i);
      out += simple;
      i += 2;
      chunkStart = i;
    }
  }

  private hex4(at: number): number {
    let unit = 0;
    for (let k = 0; k < 4; k++) {
      const digit = hexValue(this.text.charCodeAt(at + k));
      if (digit < 0) throw new PythonJsonDecodeError('Invalid \\uXXXX escape', at - 1);
      unit = unit * 16 + digit;
    }
    return unit;
  }

  private object(depth: number): PyDict {
    if (depth > MAX_NESTING_DEPTH) this.fail('Nesting too deep');
    const result: PyDict = new Map();
    this.pos++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return result;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== QUOTE) this.fail('Expecting property name enclosed in double quotes');
      const key = this.string();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("Expecting ':' delimiter");
      this.pos++;
      this.skipWhitespace();
      result.set(key, this.value(depth));
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.pos);
      if (next === 0x7d) {
        this.pos++;
        return result;
      }
      if (next !== 0x2c) this.fail("Expecting ',' delimiter");
      this.pos++;
      this.skipWhitespace();
    }
  }

  private array(depth: number): PyValue[] {
    if (depth > MAX_NESTING_DEPTH) this.fail('Nesting too deep');
    const result: PyValue[] = [];
    this.pos++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value(depth));
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.pos);
      if (next === 0x5d) {
        this.pos++;
        return result;
      }
      if (next !== 0x2c) this.fail("Expecting ',' delimiter");
      this.pos++;
      this.skipWhitespace();
    }
  }
}

/** Decodes `text` as CPython's `json.loads(text)` would; throws `PythonJsonDecodeError` where it raises. */
export function loadsPythonJson(text: string): PyValue {
  return new Decoder(text).decode();
}
