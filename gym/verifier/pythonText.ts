// Python's `str.lower()` and the word-overlap string rule NeMo Gym builds on `s.lower().split()`.
import { countPythonWords, forEachPythonWord } from '../pythonJsonLexis';
import { decodePythonJson } from '../pythonJson';
import * as tokens from './argumentText';

// Bound once: every read of an import goes through the module's export getter, and this one runs
// for every string value compared.
const { scanString } = tokens;

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

/** Words the all-ASCII path compares in place: more take the general path. */
const MAX_ASCII_WORDS = 64;
/** Per word: start, end, and a hash of its lower-cased text that rules out most unequal words
 * without comparing them. Reused by every comparison so none allocates. */
const WORD_SLOTS = 3;
const expectedWords = new Int32Array(WORD_SLOTS * MAX_ASCII_WORDS);
const actualWords = new Int32Array(WORD_SLOTS * MAX_ASCII_WORDS);
const claimedExpectedWords = new Uint8Array(MAX_ASCII_WORDS);

/** In the unit tables, a code unit that `str.isspace()` holds to be whitespace. */
const SPACE = 0xff;
/** In QUOTED_WORD_UNITS, what ends or interrupts raw string content: the closing quote, the
 * backslash of an escape, and a control character (invalid raw in a JSON string). */
const QUOTE = 0xfe;
const ESCAPE = 0xfd;
const CONTROL = 0xfc;
/** Per code unit below U+0080 of a decoded string: the one `lower()` makes of it, or SPACE. */
const PLAIN_WORD_UNITS = Uint8Array.from({ length: 0x80 }, (_, code) => {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f)) return SPACE;
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
});
/** The same for the raw content of a JSON string literal, where only the space is raw whitespace. */
const QUOTED_WORD_UNITS = PLAIN_WORD_UNITS.map((unit, code) => {
  if (code === 0x22) return QUOTE;
  if (code === 0x5c) return ESCAPE;
  if (code <= 0x1f) return CONTROL;
  return unit;
});

/** Where the last `asciiWords` stopped: `end`, or the closing quote of `quoted` content. */
let wordsEnd = 0;

/** `text[start:end].lower().split()` into `words` when the region is all ASCII; the word count,
 * or -1 for a non-ASCII character or too many words. `quoted` content is a JSON string literal's,
 * read from `start` up to its closing quote (before `end`, the text's length) in the same pass;
 * there -1 also stands for an escape other than the whitespace ones, a control character, and a
 * literal with no closing quote. */
function asciiWords(text: string, start: number, end: number, words: Int32Array, quoted: boolean): number {
  const units = quoted ? QUOTED_WORD_UNITS : PLAIN_WORD_UNITS;
  let count = 0;
  let inWord = false;
  let hash = 0;
  let index = start;
  for (; index < end; index++) {
    const at = index;
    const code = text.charCodeAt(index);
    if (code >= 0x80) return -1;
    let unit = units[code] as number;
    if (unit >= CONTROL && unit !== SPACE) {
      if (unit === QUOTE) break;
      if (unit === CONTROL) return -1;
      // \n \t \r \f stand for whitespace, so the words between them are the raw text itself.
      const escape = text.charCodeAt(++index);
      if (escape !== 0x6e && escape !== 0x74 && escape !== 0x72 && escape !== 0x66) return -1;
      unit = SPACE;
    }
    const space = unit === SPACE;
    if (space) {
      if (inWord) {
        words[WORD_SLOTS * count - 2] = at;
        words[WORD_SLOTS * count - 1] = hash;
      }
    } else {
      if (!inWord) {
        if (count === MAX_ASCII_WORDS) return -1;
        words[WORD_SLOTS * count] = at;
        count++;
        hash = 0;
      }
      hash = (Math.imul(hash, 31) + unit) | 0;
    }
    inWord = !space;
  }
  if (quoted && index >= end) return -1;
  if (inWord) {
    words[WORD_SLOTS * count - 2] = index;
    words[WORD_SLOTS * count - 1] = hash;
  }
  wordsEnd = index;
  return count;
}

function sameLowerAsciiWord(expected: string, expectedWord: number, actual: string, actualWord: number): boolean {
  const e = WORD_SLOTS * expectedWord;
  const a = WORD_SLOTS * actualWord;
  if (expectedWords[e + 2] !== actualWords[a + 2]) return false;
  const expectedStart = expectedWords[e] as number;
  const actualStart = actualWords[a] as number;
  const length = (expectedWords[e + 1] as number) - expectedStart;
  if ((actualWords[a + 1] as number) - actualStart !== length) return false;
  for (let offset = 0; offset < length; offset++) {
    // Word characters are ASCII and not whitespace, so their units are their lower-case forms.
    if (PLAIN_WORD_UNITS[expected.charCodeAt(expectedStart + offset)] !== PLAIN_WORD_UNITS[actual.charCodeAt(actualStart + offset)]) return false;
  }
  return true;
}

/**
 * Whether the word counts alone (both at least two) settle the word-overlap rule, which then
 * passes exactly when the threshold is at or below 0: the shared count lies between 0 and the
 * smaller count, so such a threshold always passes and one above smaller / total (any above 0.5)
 * never does. Division rounds monotonically, so the bounds are exact.
 */
function similarityIsSettled(expectedCount: number, actualCount: number, threshold: number): boolean {
  return threshold <= 0 || Math.min(expectedCount, actualCount) / (expectedCount + actualCount) < threshold;
}

/**
 * NeMo Gym's word-overlap match for strings. With fewer than two words on either side the original
 * strings must be identical; otherwise the shared-word count over the total word count (at most
 * 0.5 for identical multisets, since the denominator is a sum) must reach the threshold. ASCII
 * text runs in place: no lower-cased copies, no word map.
 */
export function stringsMatch(expected: string, actual: string, wordCountSimilarityThreshold: number): boolean {
  const identical = expected === actual;
  // Identical strings: equal below two words, similarity exactly 0.5 otherwise.
  if (identical && wordCountSimilarityThreshold <= 0.5) return true;
  const expectedCount = asciiWords(expected, 0, expected.length, expectedWords, false);
  const actualCount = expectedCount < 0 ? -1 : asciiWords(actual, 0, actual.length, actualWords, false);
  if (actualCount < 0) return wordOverlapMatches(expected, actual, wordCountSimilarityThreshold);
  return asciiWordsMatch(expected, expectedCount, actual, actualCount, identical, wordCountSimilarityThreshold);
}

/** `quotedStringsMatch` found the actual literal invalid. */
export const ACTUAL_LITERAL_INVALID = -1;
/** Past the closing quote of the actual literal the last `quotedStringsMatch` read. */
export const quotedRead = { actualEnd: 0 };

/**
 * `stringsMatch` of two JSON string literals read in place, escapes unresolved: the expected one's
 * content is `expected[expectedStart:expectedEnd]`, already read and valid; the actual one's starts
 * at `actualStart` and is read here up to its closing quote, in the same pass that splits it into
 * words. 1 when they match, 0 when not, or ACTUAL_LITERAL_INVALID; `quotedRead.actualEnd` is past
 * the actual closing quote. `identical` is what the caller's scan learnt: the actual literal
 * repeats the expected one. Raw content maps to text one to one, so identical content is an
 * identical string, and in the ASCII path, which admits only the whitespace escapes, different
 * content is a different string too.
 */
export function quotedStringsMatch(
  expected: string,
  expectedStart: number,
  expectedEnd: number,
  actual: string,
  actualStart: number,
  identical: boolean,
  wordCountSimilarityThreshold: number,
): number {
  const actualCount = asciiWords(actual, actualStart, actual.length, actualWords, true);
  let actualEnd = wordsEnd;
  if (actualCount < 0) {
    const end = scanString(actual, actualStart);
    if (end < 0) return ACTUAL_LITERAL_INVALID;
    actualEnd = end - 1;
  }
  quotedRead.actualEnd = actualEnd + 1;
  if (identical && wordCountSimilarityThreshold <= 0.5) return 1;
  const expectedCount = actualCount < 0 ? -1 : asciiWords(expected, expectedStart, expected.length, expectedWords, true);
  const matches =
    expectedCount < 0
      ? wordOverlapMatches(literalText(expected, expectedStart, expectedEnd), literalText(actual, actualStart, actualEnd), wordCountSimilarityThreshold)
      : asciiWordsMatch(expected, expectedCount, actual, actualCount, identical, wordCountSimilarityThreshold);
  return matches ? 1 : 0;
}

/** The word-overlap rule on the words `asciiWords` left in `expectedWords` and `actualWords`. */
function asciiWordsMatch(
  expected: string,
  expectedCount: number,
  actual: string,
  actualCount: number,
  identical: boolean,
  wordCountSimilarityThreshold: number,
): boolean {
  if (expectedCount < 2 || actualCount < 2) return identical;
  if (similarityIsSettled(expectedCount, actualCount, wordCountSimilarityThreshold)) return wordCountSimilarityThreshold <= 0;
  // Σ min(countE(w), countA(w)): each actual word claims one unclaimed equal expected word. The
  // count only grows, by at most one per actual word left, so the verdict is known as soon as the
  // count reaches the threshold or the words left can no longer bring it there.
  claimedExpectedWords.fill(0, 0, expectedCount);
  const total = expectedCount + actualCount;
  let shared = 0;
  for (let actualWord = 0; actualWord < actualCount; actualWord++) {
    if ((shared + actualCount - actualWord) / total < wordCountSimilarityThreshold) return false;
    for (let expectedWord = 0; expectedWord < expectedCount; expectedWord++) {
      if (claimedExpectedWords[expectedWord] === 0 && sameLowerAsciiWord(expected, expectedWord, actual, actualWord)) {
        claimedExpectedWords[expectedWord] = 1;
        shared++;
        if (shared / total >= wordCountSimilarityThreshold) return true;
        break;
      }
    }
  }
  return shared / total >= wordCountSimilarityThreshold;
}

/** The string a JSON literal's raw content `text[start:end]` stands for. */
function literalText(text: string, start: number, end: number): string {
  // A string literal is itself a JSON text, and decoding it resolves the escapes.
  return decodePythonJson(text.slice(start - 1, end + 1)) as string;
}

/** The string rule for any text: lower-cased with Python's full mapping, words counted in a map. */
function wordOverlapMatches(expected: string, actual: string, wordCountSimilarityThreshold: number): boolean {
  if (expected === actual && wordCountSimilarityThreshold <= 0.5) return true;
  // No lower-case mapping makes or removes whitespace, so words can be counted before lowering,
  // and most pairs that fail or pass on plain equality never get lowered.
  const expectedCount = countPythonWords(expected);
  if (expectedCount < 2) return expected === actual;
  const actualCount = countPythonWords(actual);
  if (actualCount < 2) return expected === actual;
  if (similarityIsSettled(expectedCount, actualCount, wordCountSimilarityThreshold)) return wordCountSimilarityThreshold <= 0;
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
