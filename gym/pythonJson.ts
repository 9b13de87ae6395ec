import { BACKSLASH, hexValue, isDigit, isJsonWhitespace, QUOTE, SIMPLE_ESCAPES } from './pythonJsonLexis';

// The one JSON decoder with the semantics of CPython's `json.loads` (the C scanner, default
// arguments). NeMo Gym decodes tool-call arguments and dataset lines with it, and both the
// verifier's verdicts and the validator's messages depend on what it accepts, on the Python type
// each lexeme becomes and on where it reports an error. `JSON.parse` differs on every one of those
// points: it rejects NaN/Infinity, loses integers beyond 2^53, cannot tell `1.0` from `1`,
// reorders integer-like object keys and counts positions in UTF-16 units.

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

/** CPython's `JSONDecodeError`: `message` is its text, e.g. `Expecting value: line 1 column 5 (char 4)`. */
export class PythonJsonDecodeError extends Error {
  constructor(
    readonly reason: string,
    /** 0-based offset in code points, as Python counts. */
    readonly position: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason}: line ${line} column ${column} (char ${position})`);
    this.name = 'PythonJsonDecodeError';
  }
}

/**
 * CPython raises RecursionError (not a decode error, so NeMo Gym has no verdict) around 1000 levels;
 * beyond this depth we report a decode error rather than overflow our stack. A text needs at least
 * 2 × (this + 1) characters to exceed it, which lets callers skip the check for shorter texts.
 */
export const MAX_NESTING_DEPTH = 2000;

/** Code points in `text` before UTF-16 index `index16`: a surrogate pair is one, a lone surrogate
 * (possible in decoded `arguments` strings) is one as well. */
function codePointIndex(text: string, index16: number): number {
  let pairs = 0;
  for (let i = 0; i < index16 - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return index16 - pairs;
}

function decodeError(text: string, reason: string, index16: number): PythonJsonDecodeError {
  const position = codePointIndex(text, index16);
  const lastNewline = index16 === 0 ? -1 : text.lastIndexOf('\n', index16 - 1);
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index16; i = text.indexOf('\n', i + 1)) line++;
  const column = lastNewline === -1 ? position + 1 : position - codePointIndex(text, lastNewline);
  return new PythonJsonDecodeError(reason, position, line, column);
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;

class Scanner {
  /** Index just past the value the last scan produced. */
  private end = 0;

  constructor(private readonly text: string) {}

  private fail(reason: string, index: number): never {
    throw decodeError(this.text, reason, index);
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
    if (text.charCodeAt(index) === MINUS) index++;
    const first = text.charCodeAt(index);
    if (first === 0x30) {
      index++;
    } else if (first >= 0x31 && first <= 0x39) {
      index++;
      while (isDigit(text.charCodeAt(index))) index++;
    } else {
      this.fail('Expecting value', start);
    }
    let isFloat = false;
    if (text.charCodeAt(index) === 0x2e && isDigit(text.charCodeAt(index + 1))) {
      isFloat = true;
      index += 2;
      while (isDigit(text.charCodeAt(index))) index++;
    }
    const e = text.charCodeAt(index);
    if (e === 0x65 || e === 0x45) {
      // Only an exponent with digits belongs to the number: `1e` reads as `1`, then `e` is left over.
      let exponent = index + 1;
      const sign = text.charCodeAt(exponent);
      if (sign === 0x2b || sign === MINUS) exponent++;
      if (isDigit(text.charCodeAt(exponent))) {
        while (isDigit(text.charCodeAt(exponent))) exponent++;
        index = exponent;
        isFloat = true;
      }
    }
    this.end = index;
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
    let out = '';
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
      out += text.slice(end, next);
      next++;
      if (code === QUOTE) {
        this.end = next;
        return out;
      }
      if (next === length) this.fail('Unterminated string starting at', begin);
      const escape = text[next];
      if (escape !== 'u') {
        const decoded = SIMPLE_ESCAPES[escape];
        if (decoded === undefined) this.fail('Invalid \\escape', next - 1);
        out += decoded;
        end = next + 1;
        continue;
      }
      end = next + 5;
      // CPython wants at least one character after the four hex digits (the closing quote).
      if (end >= length) this.fail('Invalid \\uXXXX escape', next);
      // A surrogate pair written as two escapes and two lone surrogates are the same UTF-16 units,
      // so each escape is appended as it comes; the low half's digits are checked on its own turn.
      out += String.fromCharCode(this.readHex4(next + 1, next));
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

/** `json.loads(text)`; throws PythonJsonDecodeError with Python's message and position. */
export function loadsPythonJson(text: string): PyValue {
  return new Scanner(text).decode();
}
