import { BACKSLASH, hexValue, isDigit, isJsonWhitespace, QUOTE, SIMPLE_ESCAPES } from '../pythonJsonLexis';

// A JSON decoder that behaves like CPython 3.11's `json.loads` (the C scanner): what it accepts,
// the Python types it produces, and the exact error text and position it reports. The validator's
// messages quote decoded values and decoder errors, so JavaScript's JSON.parse cannot stand in.

/** A Python `int`, kept as its JSON digits: Python integers are arbitrary-precision. */
export class PyInt {
  constructor(readonly digits: string) {}
}

/** A Python `float`; kept apart from PyInt because `1.0` and `1` print differently. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python `dict`: a Map keeps text order, keeps a re-assigned key in its first place, and has no
 * inherited keys (`__proto__`, `toString` are ordinary strings). */
export type PyDict = Map<string, PyValue>;
export type PyValue = null | boolean | string | PyInt | PyFloat | PyValue[] | PyDict;

export function isPyDict(value: PyValue | undefined): value is PyDict {
  return value instanceof Map;
}

export class PyJsonDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PyJsonDecodeError';
  }
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Python counts positions in code points; raw text never holds lone surrogates (it came from
 * strict UTF-8), so every surrogate pair before `index16` is one code point. */
function codePointIndex(text: string, index16: number): number {
  let pairs = 0;
  for (let i = 0; i < index16 - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      pairs++;
      i++;
    }
  }
  return index16 - pairs;
}

function decodeError(text: string, message: string, index16: number): PyJsonDecodeError {
  const pos = codePointIndex(text, index16);
  const lastNewline = index16 === 0 ? -1 : text.lastIndexOf('\n', index16 - 1);
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index16; i = text.indexOf('\n', i + 1)) line++;
  const column = lastNewline === -1 ? pos + 1 : pos - codePointIndex(text, lastNewline);
  return new PyJsonDecodeError(`${message}: line ${line} column ${column} (char ${pos})`);
}

class Scanner {
  /** Index just past the value the last scan produced. */
  private end = 0;

  constructor(private readonly text: string) {}

  private fail(message: string, index: number): never {
    throw decodeError(this.text, message, index);
  }

  private skipWhitespace(index: number): number {
    const { text } = this;
    while (index < text.length && isJsonWhitespace(text.charCodeAt(index))) index++;
    return index;
  }

  decode(): PyValue {
    const { text } = this;
    if (text.charCodeAt(0) === 0xfeff) this.fail('Unexpected UTF-8 BOM (decode using utf-8-sig)', 0);
    const value = this.scanValue(this.skipWhitespace(0));
    const end = this.skipWhitespace(this.end);
    if (end !== text.length) this.fail('Extra data', end);
    return value;
  }

  private scanValue(index: number): PyValue {
    const { text } = this;
    if (index >= text.length) this.fail('Expecting value', index);
    switch (text.charCodeAt(index)) {
      case QUOTE:
        return this.scanString(index + 1);
      case OPEN_BRACE:
        return this.scanObject(index + 1);
      case OPEN_BRACKET:
        return this.scanArray(index + 1);
    }
    switch (text[index]) {
      case 'n':
        if (text.startsWith('null', index)) return this.literal(null, index + 4);
        break;
      case 't':
        if (text.startsWith('true', index)) return this.literal(true, index + 4);
        break;
      case 'f':
        if (text.startsWith('false', index)) return this.literal(false, index + 5);
        break;
      case 'N':
        if (text.startsWith('NaN', index)) return this.literal(new PyFloat(NaN), index + 3);
        break;
      case 'I':
        if (text.startsWith('Infinity', index)) return this.literal(new PyFloat(Infinity), index + 8);
        break;
      case '-':
        if (text.startsWith('-Infinity', index)) return this.literal(new PyFloat(-Infinity), index + 9);
        break;
    }
    return this.scanNumber(index);
  }

  private literal(value: PyValue, end: number): PyValue {
    this.end = end;
    return value;
  }

  private scanNumber(start: number): PyValue {
    const { text } = this;
    const last = text.length - 1;
    let index = start;
    if (text.charCodeAt(index) === 0x2d) {
      index++;
      if (index > last) this.fail('Expecting value', start);
    }
    const first = text.charCodeAt(index);
    if (first >= 0x31 && first <= 0x39) {
      index++;
      while (index <= last && isDigit(text.charCodeAt(index))) index++;
    } else if (first === 0x30) {
      index++;
    } else {
      this.fail('Expecting value', start);
    }
    let isFloat = false;
    if (index < last && text.charCodeAt(index) === 0x2e && isDigit(text.charCodeAt(index + 1))) {
      isFloat = true;
      index += 2;
      while (index <= last && isDigit(text.charCodeAt(index))) index++;
    }
    const e = text.charCodeAt(index);
    if (index < last && (e === 0x65 || e === 0x45)) {
      const exponentStart = index;
      index++;
      const sign = text.charCodeAt(index);
      if (index < last && (sign === 0x2d || sign === 0x2b)) index++;
      while (index <= last && isDigit(text.charCodeAt(index))) index++;
      // An `e` with no digits after it is not part of the number (`1e` reads as `1`, then `e`).
      if (isDigit(text.charCodeAt(index - 1))) isFloat = true;
      else index = exponentStart;
    }
    this.end = index;
    const literal = text.slice(start, index);
    return isFloat ? new PyFloat(Number(literal)) : new PyInt(literal);
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
      const uAt = next;
      end = uAt + 5;
      // CPython insists on at least one character after the four hex digits (the closing quote).
      if (end >= length) this.fail('Invalid \\uXXXX escape', uAt);
      let unit = this.readHex4(uAt + 1, uAt);
      if (
        unit >= 0xd800 && unit <= 0xdbff && end + 6 < length &&
        text.charCodeAt(end) === BACKSLASH && text[end + 1] === 'u'
      ) {
        const low = this.readHex4(end + 2, end + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          out += String.fromCharCode(unit, low);
          end += 6;
          continue;
        }
      }
      out += String.fromCharCode(unit);
    }
  }

  private scanObject(index: number): PyDict {
    const { text } = this;
    const dict: PyDict = new Map();
    index = this.skipWhitespace(index);
    if (text.charCodeAt(index) === CLOSE_BRACE) {
      this.end = index + 1;
      return dict;
    }
    for (;;) {
      if (text.charCodeAt(index) !== QUOTE) {
        this.fail('Expecting property name enclosed in double quotes', index);
      }
      const key = this.scanString(index + 1);
      index = this.skipWhitespace(this.end);
      if (text.charCodeAt(index) !== COLON) this.fail("Expecting ':' delimiter", index);
      const value = this.scanValue(this.skipWhitespace(index + 1));
      dict.set(key, value);
      index = this.skipWhitespace(this.end);
      const next = text.charCodeAt(index);
      if (next === CLOSE_BRACE) break;
      if (next !== COMMA) this.fail("Expecting ',' delimiter", index);
      index = this.skipWhitespace(index + 1);
    }
    this.end = index + 1;
    return dict;
  }

  private scanArray(index: number): PyValue[] {
    const { text } = this;
    const list: PyValue[] = [];
    index = this.skipWhitespace(index);
    if (text.charCodeAt(index) === CLOSE_BRACKET) {
      this.end = index + 1;
      return list;
    }
    for (;;) {
      list.push(this.scanValue(index));
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

/** `json.loads(text)`; throws PyJsonDecodeError carrying Python's message, e.g.
 * `Expecting value: line 1 column 5 (char 4)`. */
export function pyJsonLoads(text: string): PyValue {
  return new Scanner(text).decode();
}
