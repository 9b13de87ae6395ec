// Python's `str.lower()` and the word-overlap string rule NeMo Gym builds on `s.lower().split()`.
import { countPythonWords, forEachPythonWord } from '../pythonJsonLexis';

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

/**
 * NeMo Gym's word-overlap match for strings. With fewer than two words on either side the original
 * strings must be identical; otherwise the shared-word count over the total word count (at most
 * 0.5 for identical multisets, since the denominator is a sum) must reach the threshold.
 */
export function stringsMatch(expected: string, actual: string, wordCountSimilarityThreshold: number): boolean {
  // Identical strings: equal below two words, similarity exactly 0.5 otherwise.
  if (expected === actual && wordCountSimilarityThreshold <= 0.5) return true;
  // No lower-case mapping makes or removes whitespace, so words can be counted before lowering,
  // and most pairs that fail or pass on plain equality never get lowered.
  const expectedCount = countPythonWords(expected);
  if (expectedCount < 2) return expected === actual;
  const actualCount = countPythonWords(actual);
  if (actualCount < 2) return expected === actual;
  // Σ min(countE(w), countA(w)): each actual word uses up one remaining copy in the expected words.
  const remaining = new Map<string, number>();
  forEachPythonWord(pythonLower(expected), (word) => remaining.set(word, (remaining.get(word) ?? 0) + 1));
  let shared = 0;
  forEachPythonWord(pythonLower(actual), (word) => {
    const left = remaining.get(word);
    if (left) {
      shared++;
      remaining.set(word, left - 1);
    }
  });
  return shared / (expectedCount + actualCount) >= wordCountSimilarityThreshold;
}
