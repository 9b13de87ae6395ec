// Python's float() of a JSON number token read in place, and the float rule of NeMo Gym's argument
// comparison (`abs(actual - expected) < threshold`) on two such tokens.
import * as tokens from './argumentText';

// Bound imports: see gym/verifier/index.ts.
const { isDigit } = tokens;

const MINUS = 0x2d;
/** 10^0..10^22, every one exactly representable as a double. */
const POWERS_OF_TEN = Float64Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
/** Digits `readFloat` approximates; a token with more is read exactly. */
const MAX_APPROXIMATED_DIGITS = 40;
/**
 * A bound, with a margin of four, on the relative error of an approximate `readFloat`: each of at
 * most 40 digits costs two roundings of 2^-53, and the power of ten one more.
 */
const APPROXIMATION_ERROR = 2 ** -44;

/** Whether the last `readFloat` returned float() itself rather than an approximation. */
let lastReadExact = false;

/**
 * The float of a token `scanNumber` accepted as one. Digits below 2^53 (so every step is exact)
 * times an exact power of ten is one correctly rounded operation (Clinger's fast path), so it
 * equals float(). Past 2^53 it is an approximation within APPROXIMATION_ERROR, or NaN when the
 * token has too many digits or too large an exponent for that bound.
 */
function readFloat(text: string, start: number, end: number): number {
  lastReadExact = true;
  const first = text.charCodeAt(start);
  if (first === 0x4e) return Number.NaN;
  if (first === 0x49) return Number.POSITIVE_INFINITY;
  const negative = first === MINUS;
  if (negative && text.charCodeAt(start + 1) === 0x49) return Number.NEGATIVE_INFINITY;
  let mantissa = 0;
  let digits = 0;
  let scale = 0;
  let inFraction = false;
  let index = negative ? start + 1 : start;
  for (; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x2e) {
      inFraction = true;
    } else if (isDigit(code)) {
      mantissa = mantissa * 10 + (code - 0x30);
      digits++;
      if (inFraction) scale--;
    } else {
      break;
    }
  }
  if (index < end) {
    const sign = text.charCodeAt(++index);
    if (sign === 0x2b || sign === MINUS) index++;
    let exponent = 0;
    // Capped, not cut short: every digit counts toward whether the bounds below apply.
    while (index < end) exponent = Math.min(exponent * 10 + (text.charCodeAt(index++) - 0x30), 1e6);
    scale += sign === MINUS ? -exponent : exponent;
  }
  lastReadExact = mantissa < 2 ** 53;
  if (scale < -22 || scale > 22 || digits > MAX_APPROXIMATED_DIGITS) {
    lastReadExact = false;
    return Number.NaN;
  }
  const magnitude =
    scale < 0 ? mantissa / (POWERS_OF_TEN[-scale] as number) : mantissa * (POWERS_OF_TEN[scale] as number);
  return negative ? -magnitude : magnitude;
}

/** Python's float() of a token `scanNumber` accepted as a float. */
export function floatValue(text: string, start: number, end: number): number {
  const value = readFloat(text, start, end);
  // Number() rounds correctly and overflows to ±Infinity, as float() does.
  return lastReadExact ? value : Number(text.slice(start, end));
}

/** `x - x` for the float x of the token: 0 when finite, NaN for NaN and ±Infinity. */
export function floatSelfDifference(text: string, start: number, end: number): number {
  // Fewer than 309 characters and no exponent cannot reach 1.8e308, the largest double.
  if (end - start < 309) {
    let index = start;
    while (
      index < end &&
      text.charCodeAt(index) !== 0x65 &&
      text.charCodeAt(index) !== 0x45 &&
      text.charCodeAt(index) !== 0x4e &&
      text.charCodeAt(index) !== 0x49
    )
      index++;
    if (index === end) return 0;
  }
  const value = floatValue(text, start, end);
  return value - value;
}

/**
 * `abs(float(b) - float(a)) < threshold` for two float tokens. Python's repr writes 17 digits,
 * past the exact fast path; approximations decide whenever the difference is farther from the
 * threshold than their error bound, and only the rest are read exactly.
 */
export function floatsWithin(
  a: string,
  aStart: number,
  aEnd: number,
  b: string,
  bStart: number,
  bEnd: number,
  threshold: number,
): boolean {
  const x = readFloat(a, aStart, aEnd);
  const xExact = lastReadExact;
  const y = readFloat(b, bStart, bEnd);
  if (xExact && lastReadExact) return Math.abs(y - x) < threshold;
  // Each value is off by at most APPROXIMATION_ERROR of itself, and the two subtractions (ours and
  // Python's) round by 2^-53 of the difference: all of it inside `error`. Comparisons with a
  // double are monotonic under rounding, so each decision below holds for the exact values too.
  const difference = Math.abs(y - x);
  const error = (Math.abs(x) + Math.abs(y) + difference) * APPROXIMATION_ERROR;
  if (difference + error < threshold) return true;
  if (difference - error >= threshold) return false;
  return Math.abs(floatValue(b, bStart, bEnd) - floatValue(a, aStart, aEnd)) < threshold;
}
