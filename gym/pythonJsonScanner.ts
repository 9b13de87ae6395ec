// CPython's json scanner (the C one, default arguments) over a JavaScript string: what it accepts,
// the Python type each lexeme becomes, and the message and index where it fails.
import { scanPythonJsonNumber as scanNumberExport } from './pythonJsonNumber';
import { MAX_NESTING_DEPTH as DEPTH_LIMIT, PythonJsonFailure, type PyDict, type PyValue } from './pythonJsonValue';

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

// Taken off the module objects once: an import is read through a getter at each use, and these are
// used per number and per container.
const scanPythonJsonNumber = scanNumberExport;
const MAX_NESTING_DEPTH = DEPTH_LIMIT;

/** Only these four: CPython's decoder does not accept other Unicode whitespace between tokens. */
function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
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

/** One `json.loads` over one text: throws PythonJsonFailure where CPython raises. */
export class Scanner {
  /** Index just past the value the last scan produced. */
  end = 0;

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
    return scanPythonJsonNumber(text, index, this);
  }

  private literal(value: PyValue, end: number): PyValue {
    this.end = end;
    return value;
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
