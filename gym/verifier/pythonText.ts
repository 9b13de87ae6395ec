// Python's `str.lower()` and `str.split()` as NeMo Gym's string rule uses them. JavaScript's `\s`
// and `trim()` disagree with Python's `str.isspace()` (U+FEFF, U+001C..U+001F, U+0085), so the
// whitespace set is spelled out here.

const PYTHON_WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPythonWhitespace(code: number): boolean {
  return PYTHON_WHITESPACE.has(code);
}

/** `s.split()`: words separated by runs of Python whitespace, no empty words. */
export function pythonSplit(s: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    // Every Python whitespace character is in the BMP, so code units suffice and surrogates
    // (paired or lone) always stay inside a word.
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

// Capital letters that gained a lower-case mapping after Unicode 15.1. NeMo Gym runs on CPython
// 3.12/3.13 (Unicode 15.0/15.1), where they are unassigned and lower() leaves them alone, while
// Node's ICU is newer and lower-cases them.
const NEWER_THAN_REFERENCE_UNICODE = /[\u1C89\uA7CB\uA7CC\uA7CE\uA7D2\uA7D4\uA7DA\uA7DC\u{10D50}-\u{10D65}\u{16EA0}-\u{16EB8}]/u;
const NEWER_THAN_REFERENCE_UNICODE_SPLIT = new RegExp(`(${NEWER_THAN_REFERENCE_UNICODE.source})`, 'u');

/**
 * `s.lower()`. V8's `toLowerCase` applies the same Unicode full lower-case mapping as CPython:
 * one-to-many mappings (`İ` → `i̇`), the final-sigma context rule, and no case folding or
 * normalisation.
 */
export function pythonLower(s: string): string {
  if (!NEWER_THAN_REFERENCE_UNICODE.test(s)) return s.toLowerCase();
  // Lowering the pieces apart gives the same final-sigma result as CPython: to it these letters
  // are neither cased nor case-ignorable, so they end a sigma's context like a string boundary.
  return s
    .split(NEWER_THAN_REFERENCE_UNICODE_SPLIT)
    .map((piece, index) => (index % 2 === 1 ? piece : piece.toLowerCase()))
    .join('');
}

function countWords(words: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/**
 * NeMo Gym's word-overlap match for strings. With fewer than two words on either side the original
 * strings must be identical; otherwise the shared-word count over the total word count (at most
 * 0.5 for identical multisets, since the denominator is a sum) must reach the threshold.
 */
export function stringsMatch(expected: string, actual: string, wordCountSimilarityThreshold: number): boolean {
  const expectedWords = pythonSplit(pythonLower(expected));
  const actualWords = pythonSplit(pythonLower(actual));
  if (expectedWords.length < 2 || actualWords.length < 2) return expected === actual;
  const actualCounts = countWords(actualWords);
  let shared = 0;
  for (const [word, count] of countWords(expectedWords)) shared += Math.min(count, actualCounts.get(word) ?? 0);
  return shared / (expectedWords.length + actualWords.length) >= wordCountSimilarityThreshold;
}
