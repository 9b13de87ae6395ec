// CPython's text rules both ports share: what `str.isspace()` calls whitespace (which
// `str.split()` and `str.strip()` use) and how `sorted()` orders strings. The JSON grammar's own
// character classes belong to the scanner (gym/pythonJson.ts).

// `str.isspace()`: U+0009..U+000D, U+001C..U+001F, space, U+0085, U+00A0, U+1680, U+2000..U+200A,
// U+2028, U+2029, U+202F, U+205F and U+3000. JavaScript's `\s` and `trim()` disagree (U+FEFF,
// U+001C..U+001F, U+0085). Every member is in the BMP, so code units suffice and surrogates (paired
// or lone) are never whitespace. Written as comparisons, not a Set: it runs once per character.
function isPythonWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code >= 0x1c;
  if (code < 0x85) return false;
  if (code <= 0xa0) return code === 0x85 || code === 0xa0;
  if (code < 0x1680) return false;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** Calls `visit` with each word of `s.split()` in order, without building the list. */
export function forEachPythonWord(s: string, visit: (word: string) => void): void {
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (isPythonWhitespace(s.charCodeAt(i))) {
      if (start >= 0) {
        visit(s.slice(start, i));
        start = -1;
      }
    } else if (start < 0) {
      start = i;
    }
  }
  if (start >= 0) visit(s.slice(start));
}

/** `len(s.split())`, without building the list. */
export function countPythonWords(s: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const space = isPythonWhitespace(s.charCodeAt(i));
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

/** `not s.strip()`: empty, or only Python whitespace. */
export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isPythonWhitespace(s.charCodeAt(i))) return false;
  return true;
}

/** `s.strip()` with no argument. */
export function pythonStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isPythonWhitespace(s.charCodeAt(start))) start++;
  while (end > start && isPythonWhitespace(s.charCodeAt(end - 1))) end--;
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
