// CPython's character rules, in one place for the verifier and the validator: what its `json`
// decoder accepts between and inside tokens, what `str.isspace()` calls whitespace (which
// `str.split()`/`str.strip()` use), and how `sorted()` orders strings.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** Only these four: CPython's decoder does not accept other Unicode whitespace between tokens. */
export function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** ASCII digits only; Python's `json` rejects other Unicode decimal digits in numbers. */
export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

export function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}

/** The one-character escapes after a backslash; `\u` is handled by the scanner. */
export const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

// `str.isspace()`. JavaScript's `\s` and `trim()` disagree (U+FEFF, U+001C..U+001F, U+0085), so the
// set is spelled out. Every member is in the BMP, so code units suffice and surrogates (paired or
// lone) are never whitespace.
const PYTHON_WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** `s.split()`: words separated by runs of Python whitespace, no empty words. */
export function pythonSplit(s: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (PYTHON_WHITESPACE.has(s.charCodeAt(i))) {
      if (start >= 0) {
        words.push(s.slice(start, i));
        start = -1;
      }
    } else if (start < 0) {
      start = i;
    }
  }
  if (start >= 0) words.push(s.slice(start));
  return words;
}

/** `not s.strip()`: empty, or only Python whitespace. */
export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!PYTHON_WHITESPACE.has(s.charCodeAt(i))) return false;
  return true;
}

/** `s.strip()` with no argument. */
export function pythonStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && PYTHON_WHITESPACE.has(s.charCodeAt(start))) start++;
  while (end > start && PYTHON_WHITESPACE.has(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** Python's string order: by code point, so astral characters (surrogates in UTF-16) sort after
 * U+E000..U+FFFF, which a plain `<` on JavaScript strings gets wrong. */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xAstral = x >= 0xd800 && x <= 0xdfff;
    const yAstral = y >= 0xd800 && y <= 0xdfff;
    if (xAstral !== yAstral) return xAstral ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
