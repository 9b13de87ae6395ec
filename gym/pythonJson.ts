// The one JSON decoder with the semantics of CPython's `json.loads` (the C scanner, default
// arguments). NeMo Gym decodes tool-call arguments and dataset lines with it, and both the
// verifier's verdicts and the validator's messages depend on what it accepts, on the Python type
// each lexeme becomes and on where it reports an error. `JSON.parse` differs on every one of those
// points: it rejects NaN/Infinity, loses integers beyond 2^53, cannot tell `1.0` from `1`,
// reorders integer-like object keys and counts positions in UTF-16 units.
import { pythonJsonDecodeError, type PythonJsonDecodeError } from './pythonJsonError';

export { PythonJsonDecodeError } from './pythonJsonError';

/**
 * A decoded value as Python sees it: `bigint` is a Python int (arbitrary precision), `number` a
 * Python float, `boolean` a bool, `Map` a dict. A Map keeps text order, keeps a re-assigned key in
 * its first place, and has no inherited keys (`__proto__`, `toString` are ordinary strings).
 */
export type PyValue = null | boolean | bigint | number | string | PyValue[] | PyDict;
export type PyDict = Map<string, PyValue>;

export function isPyDict(value: PyValue | undefined): value is PyDict {
  return value instanceof Map;
}

/**
 * CPython raises RecursionError (not a decode error, so NeMo Gym has no verdict) around 1000 levels;
 * beyond this depth we report a decode error rather than overflow our stack. A text needs at least
 * 2 × (this + 1) characters to exceed it, which lets callers skip the check for shorter texts.
 */
export const MAX_NESTING_DEPTH = 2000;

/** A parse failure inside the scanner: a plain object, because an Error captures a stack trace,
 * which would cost more than the scan itself on the many undecodable `arguments` a policy emits. */
export class PythonJsonFailure {
  constructor(
    private readonly text: string,
    readonly reason: string,
    /** UTF-16 index into the text. */
    readonly index: number,
  ) {}

  toError(): PythonJsonDecodeError {
    return pythonJsonDecodeError(this.text, this.reason, this.index);
  }
}

// The grammar's character classes live here rather than in a shared module: the scanner calls
// them per character, and a call through another module's export getter costs more than the test.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;

/** 10^0..10^22, every one exactly representable as a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** Only these four: CPython's decoder does not accept other Unicode whitespace between tokens. */
function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** ASCII digits only; Python's `json` rejects other Unicode decimal digits in numbers. */
function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}

/** The one-character escapes after a backslash; `\u` has its own branch. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Scanner {
  /** Index just past the value the last scan produced. */
  private end = 0;

  constructor(private readonly text: string) {}

  private fail(reason: string, index: number): never {
    throw new PythonJsonFailure(this.text, reason, index);
  }

  private skipWhitespace(index: number): number {
    const { text } = this;
    while (index < text.length && isJsonWhitespace(text.charCodeAt(index))) index++;
    return index;
  }

  decode(): PyValue {
    const { text } = this;
    if (text.charCodeAt(0) === 0xfeff) this.fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
    const value = this.scanValue(this.skipWhitespace(0), 0);
    const end = this.skipWhitespace(this.end);
    if (end !== text.length) this.fail('Extra data', end);
    return value;
  }

  private scanValue(index: number, depth: number): PyValue {
    const { text } = this;
    if (index >= text.length) this.fail('Expecting value', index);
    switch (text.charCodeAt(index)) {
      case QUOTE:
        return this.scanString(index + 1);
      case OPEN_BRACE:
        if (depth >= MAX_NESTING_DEPTH) this.fail('Too deeply nested', index);
        return this.scanObject(index + 1, depth + 1);
      case OPEN_BRACKET:
        if (depth >= MAX_NESTING_DEPTH) this.fail('Too deeply nested', index);
        return this.scanArray(index + 1, depth + 1);
      // Spelled exactly so: Python accepts no other casing or sign for the constants.
      case 0x6e:
        if (text.startsWith('null', index)) return this.literal(null, index + 4);
        break;
      case 0x74:
        if (text.startsWith('true', index)) return this.literal(true, index + 4);
        break;
      case 0x66:
        if (text.startsWith('false', index)) return this.literal(false, index + 5);
        break;
      case 0x4e:
        if (text.startsWith('NaN', index)) return this.literal(Number.NaN, index + 3);
        break;
      case 0x49:
        if (text.startsWith('Infinity', index)) return this.literal(Number.POSITIVE_INFINITY, index + 8);
        break;
      case MINUS:
        if (text.startsWith('-Infinity', index)) return this.literal(Number.NEGATIVE_INFINITY, index + 9);
        break;
    }
    return this.scanNumber(index);
  }

  private literal(value: PyValue, end: number): PyValue {
    this.end = end;
    return value;
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`; the lexeme alone decides int or float. */
  private scanNumber(start: number): bigint | number {
    const { text } = this;
    let index = start;
    const negative = text.charCodeAt(index) === MINUS;
    if (negative) index++;
    // The digits' value while it is exact (at most 15 significant digits), for the fast paths below.
    let mantissa = 0;
    let digits = 0;
    let code = text.charCodeAt(index);
    if (code === 0x30) {
      index++;
    } else if (code >= 0x31 && code <= 0x39) {
      do {
        mantissa = mantissa * 10 + (code - 0x30);
        digits++;
        code = text.charCodeAt(++index);
      } while (isDigit(code));
    } else {
      this.fail('Expecting value', start);
    }
    let isFloat = false;
    let scale = 0;
    if (text.charCodeAt(index) === 0x2e && isDigit(text.charCodeAt(index + 1))) {
      isFloat = true;
      code = text.charCodeAt(++index);
      do {
        mantissa = mantissa * 10 + (code - 0x30);
        if (mantissa !== 0) digits++;
        scale--;
        code = text.charCodeAt(++index);
      } while (isDigit(code));
    }
    code = text.charCodeAt(index);
    if (code === 0x65 || code === 0x45) {
      // Only an exponent with digits belongs to the number: `1e` reads as `1`, then `e` is left over.
      let cursor = index + 1;
      const sign = text.charCodeAt(cursor);
      if (sign === 0x2b || sign === MINUS) cursor++;
      if (isDigit(text.charCodeAt(cursor))) {
        let exponent = 0;
        while (isDigit(text.charCodeAt(cursor))) exponent = Math.min(exponent * 10 + (text.charCodeAt(cursor++) - 0x30), 1e6);
        scale += sign === MINUS ? -exponent : exponent;
        index = cursor;
        isFloat = true;
      }
    }
    this.end = index;
    if (digits <= 15) {
      // Exact digits times an exact power of ten is one correctly rounded operation (Clinger's fast
      // path), so it equals Python's float(); small ints skip BigInt's string parser.
      if (!isFloat) return BigInt(negative ? -mantissa : mantissa);
      if (scale >= -22 && scale <= 22) {
        const magnitude = scale < 0 ? mantissa / POWERS_OF_TEN[-scale] : mantissa * POWERS_OF_TEN[scale];
        return negative ? -magnitude : magnitude;
      }
    }
    const lexeme = text.slice(start, index);
    // Number() rounds correctly and overflows to ±Infinity, as Python's float() does.
    return isFloat ? Number(lexeme) : BigInt(lexeme);
  }

  private readHex4(at: number, errorAt: number): number {
    let code = 0;
    for (let i = at; i < at + 4; i++) {
      const digit = hexValue(this.text.charCodeAt(i));
      if (digit < 0) this.fail('Invalid \\uXXXX escape', errorAt);
      code = (code << 4) | digit;
    }
    return code;
  }

  private scanString(contentStart: number): string {
    const { text } = this;
    const begin = contentStart - 1;
    const length = text.length;
    // Runs between escapes, joined once: `+=` would leave a rope, and every later charCodeAt on
    // it (the string rule reads each character) would pay for walking it.
    let pieces: string[] | undefined;
    let end = contentStart;
    for (;;) {
      let next = end;
      let code = 0;
      for (; next < length; next++) {
        code = text.charCodeAt(next);
        if (code === QUOTE || code === BACKSLASH) break;
        if (code <= 0x1f) this.fail('Invalid control character at', next);
      }
      if (next >= length) this.fail('Unterminated string starting at', begin);
      if (code === QUOTE) {
        this.end = next + 1;
        if (pieces === undefined) return text.slice(end, next);
        pieces.push(text.slice(end, next));
        return pieces.join('');
      }
      pieces ??= [];
      pieces.push(text.slice(end, next));
      next++;
      if (next === length) this.fail('Unterminated string starting at', begin);
      const escape = text[next];
      if (escape !== 'u') {
        const decoded = SIMPLE_ESCAPES[escape];
        if (decoded === undefined) this.fail('Invalid \\escape', next - 1);
        pieces.push(decoded);
        end = next + 1;
        continue;
      }
      end = next + 5;
      // CPython wants at least one character after the four hex digits (the closing quote).
      if (end >= length) this.fail('Invalid \\uXXXX escape', next);
      // A surrogate pair written as two escapes and two lone surrogates are the same UTF-16 units,
      // so each escape is appended as it comes; the low half's digits are checked on its own turn.
      pieces.push(String.fromCharCode(this.readHex4(next + 1, next)));
    }
  }

  private scanObject(index: number, depth: number): PyDict {
    const { text } = this;
    const dict: PyDict = new Map();
    index = this.skipWhitespace(index);
    if (text.charCodeAt(index) === CLOSE_BRACE) {
      this.end = index + 1;
      return dict;
    }
    for (;;) {
      if (text.charCodeAt(index) !== QUOTE) this.fail('Expecting property name enclosed in double quotes', index);
      const key = this.scanString(index + 1);
      index = this.skipWhitespace(this.end);
      if (text.charCodeAt(index) !== COLON) this.fail("Expecting ':' delimiter", index);
      dict.set(key, this.scanValue(this.skipWhitespace(index + 1), depth));
      index = this.skipWhitespace(this.end);
      const next = text.charCodeAt(index);
      if (next === CLOSE_BRACE) break;
      if (next !== COMMA) this.fail("Expecting ',' delimiter", index);
      index = this.skipWhitespace(index + 1);
    }
    this.end = index + 1;
    return dict;
  }

  private scanArray(index: number, depth: number): PyValue[] {
    const { text } = this;
    const list: PyValue[] = [];
    index = this.skipWhitespace(index);
    if (text.charCodeAt(index) === CLOSE_BRACKET) {
      this.end = index + 1;
      return list;
    }
    for (;;) {
      list.push(this.scanValue(index, depth));
      index = this.skipWhitespace(this.end);
      const next = text.charCodeAt(index);
      if (next === CLOSE_BRACKET) break;
      if (next !== COMMA) this.fail("Expecting ',' delimiter", index);
      index = this.skipWhitespace(index + 1);
    }
    this.end = index + 1;
    return list;
  }
}

/** `json.loads(text)`, or the failure CPython would raise as a value (cheap: no exception object). */
export function decodePythonJson(text: string): PyValue | PythonJsonFailure {
  try {
    return new Scanner(text).decode();
  } catch (error) {
    if (error instanceof PythonJsonFailure) return error;
    throw error;
  }
}

/** `json.loads(text)`; throws PythonJsonDecodeError with Python's message and position. */
export function loadsPythonJson(text: string): PyValue {
  const result = decodePythonJson(text);
  if (result instanceof PythonJsonFailure) throw result.toError();
  return result;
}
