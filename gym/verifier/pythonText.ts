// Python's `str.lower()` and the word-overlap string rule NeMo Gym builds on `s.lower().split()`.
import { countPythonWords, forEachPythonWord } from '../pythonJsonLexis';
import { decodePythonJson } from '../pythonJson';
import * as tokens from './argumentText';

// Bound imports: see gym/verifier/index.ts.
const { scanString } = tokens;

// Capital letters that gained a lower-case mapping after Unicode 15.1. NeMo Gym runs on CPython
// 3.12/3.13 (Unicode 15.0/15.1), where they are unassigned and lower() leaves them alone, while
// Node's ICU is newer and lower-cases them.
const NEWER_THAN_REFERENCE_UNICODE =
  /[\u1C89\uA7CB\uA7CC\uA7CE\uA7D2\uA7D4\uA7DA\uA7DC\u{10D50}-\u{10D65}\u{16EA0}-\u{16EB8}]/u;
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

/** Unit-table markers, every one above any ASCII code: where a word ends or is interrupted. */
const NON_ASCII = 0xfb;
/** In QUOTED_WORD_UNITS, what ends or interrupts raw string content: a control character (invalid
 * raw in a JSON string), the backslash of an escape, and the closing quote. */
const CONTROL = 0xfc;
const ESCAPE = 0xfd;
const QUOTE = 0xfe;
/** A code unit that `str.isspace()` holds to be whitespace. */
const SPACE = 0xff;
/** Per UTF-16 code unit of a decoded string: the one `lower()` makes of an ASCII one, SPACE, or
 * NON_ASCII. A table over every code unit spares the loops a range check per character. */
const PLAIN_WORD_UNITS = new Uint8Array(0x10000).fill(NON_ASCII);
for (let code = 0; code < 0x80; code++) {
  const space = code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  PLAIN_WORD_UNITS[code] = space ? SPACE : code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}
/** The same for the raw content of a JSON string literal, where only the space is raw whitespace. */
const QUOTED_WORD_UNITS = PLAIN_WORD_UNITS.map((unit, code) => {
  if (code === 0x22) return QUOTE;
  if (code === 0x5c) return ESCAPE;
  if (code <= 0x1f) return CONTROL;
  return unit;
});

/** Where the last `quotedAsciiWords` stopped: at the closing quote, or at the start of the word
 * past its limit. */
let wordsEnd = 0;

/** Records in `words` at `slot` the word from `index`, whose first unit is `unit`: its start, end
 * and hash. Returns its end, where `units` gives a marker or the text ends. Small enough to be
 * inlined where `units` is a constant, so the table's bounds and map are known there. */
function recordWord(
  text: string,
  index: number,
  unit: number,
  units: Uint8Array,
  words: Int32Array,
  slot: number,
): number {
  const start = index;
  let hash = unit;
  while (++index < text.length) {
    const next = units[text.charCodeAt(index)] as number;
    if (next >= NON_ASCII) break;
    hash = (Math.imul(hash, 31) + next) | 0;
  }
  words[slot] = start;
  words[slot + 1] = index;
  words[slot + 2] = hash;
  return index;
}

/** `text.lower().split()` into `words` when `text` is all ASCII; the word count, or -1 for a
 * non-ASCII character or too many words. With `wordLimit` words found it stops at the start of
 * the next one and returns `wordLimit + 1`. */
function plainAsciiWords(text: string, words: Int32Array, wordLimit: number): number {
  let count = 0;
  let index = 0;
  while (index < text.length) {
    const unit = PLAIN_WORD_UNITS[text.charCodeAt(index)] as number;
    if (unit === SPACE) index++;
    else if (unit === NON_ASCII || count === MAX_ASCII_WORDS) return -1;
    else if (count === wordLimit) return count + 1;
    else index = recordWord(text, index, unit, PLAIN_WORD_UNITS, words, WORD_SLOTS * count++);
  }
  return count;
}

/** `plainAsciiWords` of a JSON string literal's raw content from `start`, read up to its closing
 * quote in the same pass (`wordsEnd`). -1 also stands for an escape other than the whitespace
 * ones, a control character and a literal with no closing quote. Stopped at `wordLimit`, it
 * returns `wordLimit + 1` with the literal unread, and so unchecked, from `wordsEnd` on. */
function quotedAsciiWords(text: string, start: number, words: Int32Array, wordLimit: number): number {
  let count = 0;
  let index = start;
  while (index < text.length) {
    const unit = QUOTED_WORD_UNITS[text.charCodeAt(index)] as number;
    if (unit < NON_ASCII) {
      if (count === MAX_ASCII_WORDS) return -1;
      if (count === wordLimit) {
        wordsEnd = index;
        return count + 1;
      }
      index = recordWord(text, index, unit, QUOTED_WORD_UNITS, words, WORD_SLOTS * count++);
    } else if (unit === SPACE) {
      index++;
    } else if (unit === QUOTE) {
      wordsEnd = index;
      return count;
    } else if (unit === ESCAPE && isWhitespaceEscape(text.charCodeAt(index + 1))) {
      // \n \t \r \f stand for whitespace, so the words between them are the raw text itself.
      index += 2;
    } else {
      return -1;
    }
  }
  return -1;
}

function isWhitespaceEscape(code: number): boolean {
  return code === 0x6e || code === 0x74 || code === 0x72 || code === 0x66;
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
    if (
      PLAIN_WORD_UNITS[expected.charCodeAt(expectedStart + offset)] !==
      PLAIN_WORD_UNITS[actual.charCodeAt(actualStart + offset)]
    )
      return false;
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

/** How many words are worth splitting at `threshold`: where the counts alone settle the rule once
 * both reach two, one word and the knowledge that another follows is all it needs. */
function wordLimitAt(threshold: number): number {
  return threshold <= 0 || threshold > 0.5 ? 1 : MAX_ASCII_WORDS;
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
  const wordLimit = wordLimitAt(wordCountSimilarityThreshold);
  const expectedCount = plainAsciiWords(expected, expectedWords, wordLimit);
  const actualCount = expectedCount < 0 ? -1 : plainAsciiWords(actual, actualWords, wordLimit);
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
  const wordLimit = wordLimitAt(wordCountSimilarityThreshold);
  const actualCount = quotedAsciiWords(actual, actualStart, actualWords, wordLimit);
  let actualEnd = wordsEnd;
  // Past the ASCII path, or past the words worth splitting, the rest is only checked and read over.
  if (actualCount < 0 || actualCount > wordLimit) {
    const end = scanString(actual, actualCount < 0 ? actualStart : wordsEnd);
    if (end < 0) return ACTUAL_LITERAL_INVALID;
    actualEnd = end - 1;
  }
  quotedRead.actualEnd = actualEnd + 1;
  if (identical && wordCountSimilarityThreshold <= 0.5) return 1;
  const expectedCount = actualCount < 0 ? -1 : quotedAsciiWords(expected, expectedStart, expectedWords, wordLimit);
  const matches =
    expectedCount < 0
      ? wordOverlapMatches(
          literalText(expected, expectedStart, expectedEnd),
          literalText(actual, actualStart, actualEnd),
          wordCountSimilarityThreshold,
        )
      : asciiWordsMatch(expected, expectedCount, actual, actualCount, identical, wordCountSimilarityThreshold);
  return matches ? 1 : 0;
}

/** The word-overlap rule on the words the ASCII splits left in `expectedWords` and `actualWords`. */
function asciiWordsMatch(
  expected: string,
  expectedCount: number,
  actual: string,
  actualCount: number,
  identical: boolean,
  wordCountSimilarityThreshold: number,
): boolean {
  if (expectedCount < 2 || actualCount < 2) return identical;
  if (similarityIsSettled(expectedCount, actualCount, wordCountSimilarityThreshold))
    return wordCountSimilarityThreshold <= 0;
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
  if (similarityIsSettled(expectedCount, actualCount, wordCountSimilarityThreshold))
    return wordCountSimilarityThreshold <= 0;
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
