// Python-`json` tokens read in place, without building values: what the lock-step argument
// comparison (argumentPair.ts) walks both `arguments` texts with. Every reader accepts exactly what
// CPython's scanner accepts for its token (the grammar in gym/pythonJson.ts), so a text these call
// valid decodes there, and one they call invalid fails there.

/** Returned for a text that is not Python JSON. */
export const INVALID = -1;
/** Returned for nesting deeper than these readers go; gym/pythonJson.ts decides those texts. */
export const TOO_DEEP = -2;
/** Deep enough for every real tool call; deeper texts take the decoding path. */
export const MAX_SCAN_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;

/**
 * `text.charCodeAt(index)`, but -1 instead of NaN past the end, which every reader here treats as
 * the end of the text. The readers look one past a token freely; a `charCodeAt` call that has once
 * read past the end is recompiled by V8 into a form about half as fast on every later read, so
 * no such call here ever does.
 */
export function codeAt(text: string, index: number): number {
  return index < text.length ? text.charCodeAt(index) : -1;
}

/** Index of the first non-whitespace code unit from `index` on (the text's length at its end),
 * whose code `nextCode()` then returns: nearly every caller looks at that token next, and a
 * second `charCodeAt` of it costs more than the store. */
export function skipWhitespace(text: string, index: number): number {
  for (;;) {
    const code = codeAt(text, index);
    // Most calls land on a token, which one comparison tells apart.
    if (code > 0x20 || (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09)) {
      lastScan.next = code;
      return index;
    }
    index++;
  }
}

/** The code unit where the last `skipWhitespace` stopped, -1 at the end of its text. A call
 * rather than a read of `lastScan.next`, which TypeScript would hold to the value it was last
 * compared with across the calls that change it. */
export function nextCode(): number {
  return lastScan.next;
}

/** Whether `a[aStart:aEnd]` and `b[bStart:bEnd]` hold the same code units. */
export function sameRegion(a: string, aStart: number, aEnd: number, b: string, bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  // Past its text a region has no code unit to match (`charCodeAt` gives NaN there, see `codeAt`).
  if (aStart < aEnd && (aEnd > a.length || bEnd > b.length)) return false;
  for (let offset = 0; aStart + offset < aEnd; offset++) {
    if (a.charCodeAt(aStart + offset) !== b.charCodeAt(bStart + offset)) return false;
  }
  return true;
}

export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isHexDigit(code: number): boolean {
  return isDigit(code) || (code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46);
}

/** What the last scan saw besides where its token ends (an object: module bindings cannot be
 * assigned from outside, and a fresh result per token would allocate on the hottest path). */
export const lastScan = {
  /** Where the last `skipWhitespace` stopped: see `nextCode`. */
  next: -1,
  /** The last `scanString` met a backslash: only then do raw and decoded contents differ. */
  stringHadEscape: false,
  /** The other text of the last `scanStringAgainst` repeats its literal. */
  sameInOther: false,
  /** The last `scanNumber` read a Python float (fraction, exponent, NaN or ±Infinity). */
  numberIsFloat: false,
  /** Set, and left set, by `scanNumber` for a float that may not be finite: NaN, ±Infinity, or
   * one whose digits and exponent reach past the largest double. A reader that wants to know
   * clears it first. */
  floatMayNotBeFinite: false,
};

/** Index of the last character of the escape whose backslash is at `index`, or INVALID. */
function escapeEnd(text: string, index: number): number {
  const escape = codeAt(text, index + 1);
  if (escape === 0x75) {
    // \uXXXX; a lone or paired surrogate is kept either way, so each escape stands alone.
    for (let digit = 2; digit <= 5; digit++) if (!isHexDigit(codeAt(text, index + digit))) return INVALID;
    return index + 5;
  }
  const simple =
    escape === QUOTE ||
    escape === BACKSLASH ||
    escape === 0x2f ||
    escape === 0x62 ||
    escape === 0x66 ||
    escape === 0x6e ||
    escape === 0x72 ||
    escape === 0x74;
  return simple ? index + 1 : INVALID;
}

/** Index past the closing quote of the string whose content starts at `start`, or INVALID. */
export function scanString(text: string, start: number): number {
  lastScan.stringHadEscape = false;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) return index + 1;
    if (code <= 0x1f) return INVALID;
    if (code !== BACKSLASH) continue;
    lastScan.stringHadEscape = true;
    index = escapeEnd(text, index);
    if (index < 0) return INVALID;
  }
  return INVALID;
}

/** `scanString`, also telling (in `lastScan.sameInOther`) whether `other` repeats the literal,
 * closing quote included, from `otherStart`: one read of the text instead of two. */
export function scanStringAgainst(text: string, start: number, other: string, otherStart: number): number {
  const shift = otherStart - start;
  let index = start;
  let code = -1;
  // The part the other text repeats, up to an escape, read side by side.
  while (index < text.length) {
    code = text.charCodeAt(index);
    if (code !== codeAt(other, index + shift) || code === BACKSLASH || code <= 0x1f) break;
    index++;
    if (code === QUOTE) {
      lastScan.stringHadEscape = false;
      lastScan.sameInOther = true;
      return index;
    }
  }
  // From a difference on (or at a control character, which makes the literal invalid), one text
  // is read.
  if (index < text.length && code !== BACKSLASH) {
    lastScan.sameInOther = false;
    return scanString(text, index);
  }
  lastScan.stringHadEscape = false;
  let same = true;
  for (; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (same && codeAt(other, index + shift) !== code) same = false;
    if (code === QUOTE) {
      lastScan.sameInOther = same;
      return index + 1;
    }
    if (code <= 0x1f) return INVALID;
    if (code !== BACKSLASH) continue;
    lastScan.stringHadEscape = true;
    const end = escapeEnd(text, index);
    if (end < 0) return INVALID;
    if (same) same = sameRegion(text, index + 1, end + 1, other, index + 1 + shift, end + 1 + shift);
    index = end;
  }
  return INVALID;
}

/** Index past the number, NaN or ±Infinity token at `start`, whose first code unit the caller has
 * read (`first`), or INVALID. The longest lexeme is taken as CPython does: `1.` and `1e` end after
 * the `1`, and the leftover fails where it stands. */
export function scanNumber(text: string, start: number, first: number): number {
  let index = start;
  if (first === MINUS) first = codeAt(text, ++index);
  const integerStart = index;
  let next: number;
  // A digit is by far the most common start, so the named constants are looked for only after.
  if (first === 0x30) next = codeAt(text, ++index);
  else if (first >= 0x31 && first <= 0x39) while (isDigit((next = codeAt(text, ++index))));
  else return scanNamedNumber(text, start);
  const integerDigits = index - integerStart;
  lastScan.numberIsFloat = false;
  if (next === 0x2e && isDigit(codeAt(text, index + 1))) {
    lastScan.numberIsFloat = true;
    index++;
    while (isDigit((next = codeAt(text, ++index))));
  }
  if (next === 0x65 || next === 0x45) {
    let cursor = index + 1;
    let code = codeAt(text, cursor);
    const negative = code === MINUS;
    if (negative || code === 0x2b) code = codeAt(text, ++cursor);
    if (isDigit(code)) {
      lastScan.numberIsFloat = true;
      let exponent = 0;
      // Capped, as past the cap the bound below decides the same.
      do exponent = Math.min(exponent * 10 + (code - 0x30), 1e6);
      while (isDigit((code = codeAt(text, ++cursor))));
      // The float lies below 10^(integer digits + exponent), and 1.8e308 is the largest double.
      if (integerDigits + (negative ? -exponent : exponent) > 308) lastScan.floatMayNotBeFinite = true;
      return cursor;
    }
  }
  // Without an exponent, 1.8e308 takes 309 integer digits to write.
  if (lastScan.numberIsFloat && integerDigits > 308) lastScan.floatMayNotBeFinite = true;
  return index;
}

/** Index past `NaN`, `Infinity` or `-Infinity` at `start` (a float), or INVALID: `-NaN` is not one. */
function scanNamedNumber(text: string, start: number): number {
  lastScan.numberIsFloat = true;
  lastScan.floatMayNotBeFinite = true;
  if (text.startsWith('NaN', start)) return start + 3;
  const index = codeAt(text, start) === MINUS ? start + 1 : start;
  return text.startsWith('Infinity', index) ? index + 8 : INVALID;
}

/** Index past `null`, `true` or `false` spelled exactly at `start`, where the caller has read
 * `first`, or INVALID. */
export function scanLiteral(text: string, start: number, first: number): number {
  // Spelled out code unit by code unit: `startsWith` is a builtin call that costs several times
  // these reads. Past the text `charCodeAt` gives NaN, which matches nothing.
  switch (first) {
    case 0x6e:
      return text.charCodeAt(start + 1) === 0x75 &&
        text.charCodeAt(start + 2) === 0x6c &&
        text.charCodeAt(start + 3) === 0x6c
        ? start + 4
        : INVALID;
    case 0x74:
      return text.charCodeAt(start + 1) === 0x72 &&
        text.charCodeAt(start + 2) === 0x75 &&
        text.charCodeAt(start + 3) === 0x65
        ? start + 4
        : INVALID;
    case 0x66:
      return text.charCodeAt(start + 1) === 0x61 &&
        text.charCodeAt(start + 2) === 0x6c &&
        text.charCodeAt(start + 3) === 0x73 &&
        text.charCodeAt(start + 4) === 0x65
        ? start + 5
        : INVALID;
  }
  return INVALID;
}

/** Index past the members and the closing bracket of a container whose opening bracket is just
 * before `index`. */
function skipContainerRest(text: string, index: number, close: number, isObject: boolean, depth: number): number {
  index = skipWhitespace(text, index);
  if (nextCode() === close) return index + 1;
  for (;;) {
    if (isObject) {
      if (nextCode() !== QUOTE) return INVALID;
      index = scanString(text, index + 1);
      if (index < 0) return index;
      index = skipWhitespace(text, index);
      if (nextCode() !== 0x3a) return INVALID;
      index = skipWhitespace(text, index + 1);
    }
    index = skipValueFrom(text, index, nextCode(), depth);
    if (index < 0) return index;
    index = skipWhitespace(text, index);
    const next = nextCode();
    if (next === close) return index + 1;
    if (next !== 0x2c) return INVALID;
    index = skipWhitespace(text, index + 1);
  }
}

/** Index past the value starting at `index` (no whitespace before it), INVALID, or TOO_DEEP.
 * `depth` counts the containers already open around it. */
export function skipValue(text: string, index: number, depth: number): number {
  return skipValueFrom(text, index, codeAt(text, index), depth);
}

/** `skipValue` for a caller that has read the value's first code unit, `code`, already. */
export function skipValueFrom(text: string, index: number, code: number, depth: number): number {
  if (code === QUOTE) return scanString(text, index + 1);
  if (code === 0x7b || code === 0x5b) {
    if (depth >= MAX_SCAN_DEPTH) return TOO_DEEP;
    return skipContainerRest(text, index + 1, code + 2, code === 0x7b, depth + 1);
  }
  if (code === 0x6e || code === 0x74 || code === 0x66) return scanLiteral(text, index, code);
  return scanNumber(text, index, code);
}

/** The rest of a list after an element and its comma: `index` is at the next element. */
export function skipListRest(text: string, index: number, depth: number): number {
  let code = codeAt(text, index);
  for (;;) {
    index = skipValueFrom(text, index, code, depth);
    if (index < 0) return index;
    index = skipWhitespace(text, index);
    const next = nextCode();
    if (next === 0x5d) return index + 1;
    if (next !== 0x2c) return INVALID;
    index = skipWhitespace(text, index + 1);
    code = nextCode();
  }
}

/** Whether `json.loads(text)` succeeds: true, false, or TOO_DEEP when only decoding can tell. */
export function isPythonJson(text: string): boolean | typeof TOO_DEEP {
  const start = skipWhitespace(text, 0);
  const end = skipValueFrom(text, start, nextCode(), 0);
  if (end === TOO_DEEP) return TOO_DEEP;
  return end >= 0 && skipWhitespace(text, end) === text.length;
}
