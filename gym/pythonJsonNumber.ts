// Numbers as CPython's json scanner reads them: the lexeme decides int (a BigInt, any size) or float
// (correctly rounded, ±Infinity on overflow), as `int()` and `float()` of it would.
import { PythonJsonFailure } from './pythonJsonValue';

const MINUS = 0x2d;

/** 10^0..10^22, every one exactly representable as a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** ASCII digits only; Python's `json` rejects other Unicode decimal digits in numbers. */
function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?` at `start`; the lexeme alone decides int or
 * float. Sets `cursor.end` just past the lexeme; throws PythonJsonFailure when there is none. */
export function scanPythonJsonNumber(text: string, start: number, cursor: { end: number }): bigint | number {
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
    throw new PythonJsonFailure(text, 'Expecting value', start);
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
      while (isDigit(text.charCodeAt(cursor)))
        exponent = Math.min(exponent * 10 + (text.charCodeAt(cursor++) - 0x30), 1e6);
      scale += sign === MINUS ? -exponent : exponent;
      index = cursor;
      isFloat = true;
    }
  }
  cursor.end = index;
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
