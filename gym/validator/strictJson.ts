// Strict JSON (the RFC 8259 grammar) checked on UTF-8 bytes without building anything: the part of
// the validator's fast path that reads the bulk of a row. One loop with an explicit stack instead of
// a call per value, since long rows are thousands of short tokens and a call each costs more than
// the token. Bytes of 0x80 and above are taken as string content; the caller checks UTF-8.
// A line is read where it lies in a larger buffer: nothing past its `end` is read.
import { MAX_NESTING_DEPTH as DEPTH_LIMIT } from '../pythonJson';

// A local copy: an import is read through a getter at each use, and this one is read per container.
const MAX_NESTING_DEPTH = DEPTH_LIMIT;

/** Returned instead of a position when the bytes are not strict JSON. */
export const FAILED = -1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const table = (bytes: Iterable<number>) => {
  const marks = new Uint8Array(256);
  for (const byte of bytes) marks[byte] = 1;
  return marks;
};
const codes = (text: string) => Array.from(text, (c) => c.charCodeAt(0));
const WHITESPACE = table(codes(' \t\n\r'));
/** Bytes that end a run of plain string content: the quote, the backslash, control characters. */
const STRING_STOPS = table([QUOTE, BACKSLASH, ...Array.from({ length: 0x20 }, (_, c) => c)]);
/** What a backslash may escape besides u: " \ / b f n r t. */
const SIMPLE_ESCAPES = table(codes('"\\/bfnrt'));
const HEX = table(codes('0123456789abcdefABCDEF'));
const DIGITS = table(codes('0123456789'));

export function skipWhitespace(bytes: Uint8Array, at: number, end: number): number {
  while (at < end && WHITESPACE[bytes[at] as number] === 1) at++;
  return at;
}

/** The line being checked, `bytes[0, end)` of a buffer that one object serves line after line
 * (only `end` changes). Also read four bytes at a time: a string's plain content (most of a long
 * row's bytes) is passed over a word per step, each word tested at once for the bytes that stop
 * it (see plainWord). */
export class StrictJsonLine {
  readonly words: DataView;
  end: number;

  constructor(readonly bytes: Buffer) {
    this.words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.end = bytes.length;
  }
}

const ONES = 0x01010101;
const HIGH_BITS = 0x80808080 | 0;

/** Whether none of the four bytes of `word` is a quote, a backslash or a control character. Each
 * test sets a byte's high bit when the byte is below some value (x - n*ONES & ~x), exact as a
 * whole for n up to 0x80; a quote or backslash is a zero byte once xor-ed with itself. */
function plainWord(word: number): boolean {
  const quote = word ^ 0x22222222;
  const backslash = word ^ 0x5c5c5c5c;
  return ((((word - 0x20 * ONES) & ~word) | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash)) & HIGH_BITS) === 0;
}

/** Where the plain string content from `at` stops: at a quote, a backslash, a control character
 * or the line's end. */
export function plainRun(line: StrictJsonLine, at: number): number {
  const bytes = line.bytes;
  const words = line.words;
  const end = line.end;
  while (at + 4 <= end && plainWord(words.getInt32(at, true))) at += 4;
  while (at < end && STRING_STOPS[bytes[at] as number] === 0) at++;
  return at;
}

/** `at` is just past the opening quote, or anywhere in the string before its closing quote;
 * returns just past the closing quote. */
export function skipString(line: StrictJsonLine, at: number): number {
  const bytes = line.bytes;
  const end = line.end;
  for (;;) {
    at = plainRun(line, at);
    if (at >= end) return FAILED;
    const c = bytes[at] as number;
    if (c === QUOTE) return at + 1;
    if (c !== BACKSLASH || at + 1 >= end) return FAILED;
    const escaped = bytes[at + 1] as number;
    if (escaped === 0x75) {
      if (at + 5 >= end) return FAILED;
      if ((HEX[bytes[at + 2] as number] & HEX[bytes[at + 3] as number] & HEX[bytes[at + 4] as number] & HEX[bytes[at + 5] as number]) !== 1) return FAILED;
      at += 6;
    } else if (SIMPLE_ESCAPES[escaped] === 1) {
      at += 2;
    } else {
      return FAILED;
    }
  }
}

function skipDigits(bytes: Uint8Array, at: number, end: number): number {
  while (at < end && DIGITS[bytes[at] as number] === 1) at++;
  return at;
}

/** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
function skipNumber(bytes: Uint8Array, at: number, end: number): number {
  if (at < end && bytes[at] === 0x2d) at++;
  if (at >= end) return FAILED;
  if (bytes[at] === 0x30) at++;
  else if (DIGITS[bytes[at] as number] === 1) at = skipDigits(bytes, at + 1, end);
  else return FAILED;
  if (at < end && bytes[at] === 0x2e) {
    if (at + 1 >= end || DIGITS[bytes[at + 1] as number] !== 1) return FAILED;
    at = skipDigits(bytes, at + 1, end);
  }
  if (at < end && (bytes[at] === 0x65 || bytes[at] === 0x45)) {
    at++;
    if (at < end && (bytes[at] === 0x2b || bytes[at] === 0x2d)) at++;
    if (at >= end || DIGITS[bytes[at] as number] !== 1) return FAILED;
    at = skipDigits(bytes, at, end);
  }
  return at;
}

function skipWord(bytes: Uint8Array, at: number, end: number, word: readonly number[]): number {
  if (at + word.length > end) return FAILED;
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return FAILED;
  return at + word.length;
}
const TRUE = codes('true');
const FALSE = codes('false');
const NULL = codes('null');

/** Skips the key and colon of an object member at `at` (a quote is expected there); returns where
 * its value starts. */
function skipKey(line: StrictJsonLine, at: number): number {
  const bytes = line.bytes;
  const end = line.end;
  if (at >= end || bytes[at] !== QUOTE) return FAILED;
  at = skipString(line, at + 1);
  if (at === FAILED) return FAILED;
  at = skipWhitespace(bytes, at, end);
  if (at >= end || bytes[at] !== 0x3a) return FAILED;
  return skipWhitespace(bytes, at + 1, end);
}

/** The open containers of the value being skipped, innermost last. */
const stack = new Uint8Array(MAX_NESTING_DEPTH + 1);

/**
 * Checks the one value starting at `at` (no whitespace before it) and returns where it ends, or
 * FAILED. `depth` is how many containers are already open around it; opening one past
 * MAX_NESTING_DEPTH fails, as CPython's decoder does.
 */
export function skipValue(line: StrictJsonLine, at: number, depth: number): number {
  const bytes = line.bytes;
  const end = line.end;
  let open = 0;
  for (;;) {
    // A value starts at `at`.
    if (at >= end) return FAILED;
    const c = bytes[at];
    if (c === QUOTE) {
      at = skipString(line, at + 1);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth + open >= MAX_NESTING_DEPTH) return FAILED;
      at = skipWhitespace(bytes, at + 1, end);
      if (at < end && bytes[at] === c + 2) {
        at++;
      } else {
        stack[open++] = c;
        if (c === OPEN_OBJECT) at = skipKey(line, at);
        if (at === FAILED) return FAILED;
        continue;
      }
    } else if (c === 0x74) {
      at = skipWord(bytes, at, end, TRUE);
    } else if (c === 0x66) {
      at = skipWord(bytes, at, end, FALSE);
    } else if (c === 0x6e) {
      at = skipWord(bytes, at, end, NULL);
    } else {
      at = skipNumber(bytes, at, end);
    }
    // The value ended at `at`: close what it ends, or move to the next member or element.
    for (;;) {
      if (at === FAILED) return FAILED;
      if (open === 0) return at;
      at = skipWhitespace(bytes, at, end);
      if (at >= end) return FAILED;
      const next = bytes[at];
      const container = stack[open - 1];
      if (next === 0x2c) {
        at = skipWhitespace(bytes, at + 1, end);
        if (container === OPEN_OBJECT) at = skipKey(line, at);
        if (at === FAILED) return FAILED;
        break;
      }
      if (next !== (container === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return FAILED;
      open--;
      at++;
    }
  }
}
