// Python `str` semantics the reference validator leans on: what `str.isspace()`/`str.strip()` treat
// as whitespace, and how `sorted()` orders strings (by code point, not by UTF-16 unit or locale).

const whitespace = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPythonWhitespace(codeUnit: number): boolean {
  return whitespace.has(codeUnit);
}

/** `not text.strip()`: empty, or only Python whitespace. */
export function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!whitespace.has(text.charCodeAt(i))) return false;
  return true;
}

/** `text.strip()` with no argument. */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && whitespace.has(text.charCodeAt(start))) start++;
  while (end > start && whitespace.has(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after U+E000..U+FFFF by code point, not before them.
    const xAstral = x >= 0xd800 && x <= 0xdfff;
    const yAstral = y >= 0xd800 && y <= 0xdfff;
    if (xAstral !== yAstral) return xAstral ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
