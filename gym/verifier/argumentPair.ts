// The verdict on two tool-call `arguments` texts read side by side in one pass, without decoding
// either into values. NeMo Gym decodes both with `json.loads` and walks the two trees; when the
// texts share their shape (the same keys in the same order, the common case for a policy that
// answers the right tool) that walk visits the tokens in text order, so it can run on the texts
// themselves. Anything else (keys in another order or missing, duplicate keys, escaped keys, a
// text that is not valid on the expected side) is left to the tree walk in compare.ts. Objects
// are compared in objectPair.ts, which also takes keys in another order when it can.
import type { ArgumentMismatch } from './categories';
import * as tokens from './argumentText';
import * as floatText from './floatText';
import * as objectPair from './objectPair';
import * as pairWalk from './pairWalk';
import type { PairWalk, Step } from './pairWalk';
import * as pythonText from './pythonText';

// Bound imports: see gym/verifier/index.ts.
const {
  INVALID,
  isPythonJson,
  lastScan,
  nextCode,
  MAX_SCAN_DEPTH,
  sameRegion,
  scanLiteral,
  scanNumber,
  scanStringAgainst,
} = tokens;
const { floatSelfDifference, floatsWithin } = floatText;
const { skipListRest, skipValue, skipWhitespace } = tokens;
const { ACTUAL_LITERAL_INVALID, quotedRead, quotedStringsMatch } = pythonText;
const { compareObjects, members } = objectPair;
const { MATCH, STOP } = pairWalk;

/** The texts need the decoding comparison (compare.ts) for a verdict. */
export const UNDECIDED = 'UNDECIDED';

class ArgumentPair implements PairWalk {
  expected = '';
  actual = '';
  private floatThreshold = 0;
  private wordThreshold = 0;
  e = 0;
  a = 0;
  /** Why the walk stopped: the actual text is invalid, or the decoding path has to decide. */
  stop: 'actual_invalid' | 'undecided' = 'undecided';

  run(expected: string, actual: string, floatThreshold: number, wordThreshold: number): Step {
    this.expected = expected;
    this.actual = actual;
    this.floatThreshold = floatThreshold;
    this.wordThreshold = wordThreshold;
    members.top = 0;
    this.e = skipWhitespace(expected, 0);
    const open = nextCode();
    this.a = skipWhitespace(actual, 0);
    const step = this.value(0, open, nextCode());
    if (step === STOP) return STOP;
    if (skipWhitespace(expected, this.e) !== expected.length) return this.undecided();
    if (skipWhitespace(actual, this.a) !== actual.length) return this.actualInvalid();
    return step;
  }

  undecided(): typeof STOP {
    this.stop = 'undecided';
    return STOP;
  }

  actualInvalid(): typeof STOP {
    this.stop = 'actual_invalid';
    return STOP;
  }

  /** Moves past the actual value (the expected one is already behind), reporting `step`. */
  private skipActual(step: ArgumentMismatch, depth: number): Step {
    const end = skipValue(this.actual, this.a, depth);
    if (end < 0) return end === INVALID ? this.actualInvalid() : this.undecided();
    this.a = end;
    return step;
  }

  /** Moves past both values once their comparison no longer matters or cannot be made in place. */
  skipBoth(step: ArgumentMismatch, depth: number): Step {
    const end = skipValue(this.expected, this.e, depth);
    if (end < 0) return this.undecided();
    this.e = end;
    return this.skipActual(step, depth);
  }

  /** Both cursors are at a value, whose first code units are `open` and `other`; Python's
   * `compare_tool_call_arguments` on the two. */
  value(depth: number, open: number, other: number): Step {
    const { expected, actual } = this;
    if (open === 0x7b || open === 0x5b) {
      if (depth >= MAX_SCAN_DEPTH) return this.undecided();
      if (other !== open) return this.skipBoth('ARGUMENT_VALUE_TYPE_DIFFERENT', depth);
      this.e++;
      this.a++;
      return open === 0x7b ? compareObjects(this, depth + 1) : this.list(depth + 1);
    }
    if (open === 0x22) return this.string(depth, other);
    lastScan.floatMayNotBeFinite = false;
    const expectedEnd =
      open === 0x6e || open === 0x74 || open === 0x66
        ? scanLiteral(expected, this.e, open)
        : scanNumber(expected, this.e, open);
    const expectedMayNotBeFinite = lastScan.floatMayNotBeFinite;
    if (expectedEnd < 0) return this.undecided();
    const expectedStart = this.e;
    this.e = expectedEnd;
    if (open === 0x6e || open === 0x74 || open === 0x66) {
      // None needs None; a bool needs a bool (an int is not one).
      const actualEnd = scanLiteral(actual, this.a, other);
      if (actualEnd < 0 || (open === 0x6e) !== (other === 0x6e))
        return this.skipActual('ARGUMENT_VALUE_TYPE_DIFFERENT', depth);
      this.a = actualEnd;
      return open === other ? MATCH : 'ARGUMENT_VALUE_DIFFERENT';
    }
    if (lastScan.numberIsFloat) {
      const actualStart = this.a;
      const actualEnd = scanNumber(actual, actualStart, other);
      if (actualEnd < 0 || !lastScan.numberIsFloat) return this.skipActual('ARGUMENT_VALUE_TYPE_DIFFERENT', depth);
      this.a = actualEnd;
      // Strict `<`: a zero threshold rejects identical floats, and NaN (also inf - inf) never matches.
      // A float the scan knows to be finite differs from itself by 0, without reading it again.
      const within = sameRegion(expected, expectedStart, expectedEnd, actual, actualStart, actualEnd)
        ? (expectedMayNotBeFinite ? Math.abs(floatSelfDifference(expected, expectedStart, expectedEnd)) : 0) <
          this.floatThreshold
        : floatsWithin(expected, expectedStart, expectedEnd, actual, actualStart, actualEnd, this.floatThreshold);
      return within ? MATCH : 'ARGUMENT_VALUE_DIFFERENT';
    }
    return this.integer(open, expectedStart, expectedEnd, depth, other);
  }

  /** An int: equal ints have equal lexemes but for `-0`, and a bool is the int 1 or 0. `open` and
   * `other` are the first code units of the two values. */
  private integer(open: number, expectedStart: number, expectedEnd: number, depth: number, other: number): Step {
    const { expected, actual } = this;
    if (open === 0x2d && expected.charCodeAt(expectedStart + 1) === 0x30) expectedStart++;
    if (other === 0x74 || other === 0x66) {
      const actualEnd = scanLiteral(actual, this.a, other);
      if (actualEnd < 0) return this.actualInvalid();
      this.a = actualEnd;
      const equal =
        expectedEnd - expectedStart === 1 && expected.charCodeAt(expectedStart) === (other === 0x74 ? 0x31 : 0x30);
      return equal ? MATCH : 'ARGUMENT_VALUE_DIFFERENT';
    }
    let actualStart = this.a;
    const actualEnd = scanNumber(actual, actualStart, other);
    if (actualEnd < 0 || lastScan.numberIsFloat) return this.skipActual('ARGUMENT_VALUE_TYPE_DIFFERENT', depth);
    this.a = actualEnd;
    if (other === 0x2d && actual.charCodeAt(actualStart + 1) === 0x30) actualStart++;
    return sameRegion(expected, expectedStart, expectedEnd, actual, actualStart, actualEnd)
      ? MATCH
      : 'ARGUMENT_VALUE_DIFFERENT';
  }

  private string(depth: number, other: number): Step {
    const { expected, actual } = this;
    const expectedStart = this.e + 1;
    const expectedEnd = scanStringAgainst(expected, expectedStart, actual, this.a + 1);
    if (expectedEnd < 0) return this.undecided();
    this.e = expectedEnd;
    if (other !== 0x22) return this.skipActual('ARGUMENT_VALUE_TYPE_DIFFERENT', depth);
    // The same literal, closing quote included, is the same valid string: equal below two words,
    // similarity exactly 0.5 otherwise.
    if (this.wordThreshold <= 0.5 && lastScan.sameInOther) {
      this.a += expectedEnd - expectedStart + 1;
      return MATCH;
    }
    // The literal repeated, closing quote included, is the same content; any other is not.
    const matches = quotedStringsMatch(
      expected,
      expectedStart,
      expectedEnd - 1,
      actual,
      this.a + 1,
      lastScan.sameInOther,
      this.wordThreshold,
    );
    if (matches === ACTUAL_LITERAL_INVALID) return this.actualInvalid();
    this.a = quotedRead.actualEnd;
    return matches === 1 ? MATCH : 'ARGUMENT_VALUE_DIFFERENT';
  }

  /** After `[` on both sides. A length difference outranks every element mismatch. */
  private list(depth: number): Step {
    const { expected, actual } = this;
    this.e = skipWhitespace(expected, this.e);
    let e = nextCode();
    this.a = skipWhitespace(actual, this.a);
    let a = nextCode();
    if (e === 0x5d || a === 0x5d) return this.listTails(e === 0x5d, a === 0x5d, MATCH, depth);
    let step: Step = MATCH;
    for (;;) {
      step = step === MATCH ? this.value(depth, e, a) : this.skipBoth(step, depth);
      if (step === STOP) return STOP;
      this.e = skipWhitespace(expected, this.e);
      e = nextCode();
      this.a = skipWhitespace(actual, this.a);
      a = nextCode();
      if (e !== 0x5d && e !== 0x2c) return this.undecided();
      if (a !== 0x5d && a !== 0x2c) return this.actualInvalid();
      if (e === 0x5d || a === 0x5d) {
        if (e === 0x2c) this.e = skipWhitespace(expected, this.e + 1);
        if (a === 0x2c) this.a = skipWhitespace(actual, this.a + 1);
        return this.listTails(e === 0x5d, a === 0x5d, step, depth);
      }
      this.e = skipWhitespace(expected, this.e + 1);
      e = nextCode();
      this.a = skipWhitespace(actual, this.a + 1);
      a = nextCode();
    }
  }

  /** One list or both reached `]` (under the cursor); the other one's remaining elements are read over. */
  private listTails(expectedDone: boolean, actualDone: boolean, step: Step, depth: number): Step {
    if (expectedDone && actualDone) {
      this.e++;
      this.a++;
      return step;
    }
    if (expectedDone) {
      this.e++;
      const end = skipListRest(this.actual, this.a, depth);
      if (end < 0) return end === INVALID ? this.actualInvalid() : this.undecided();
      this.a = end;
    } else {
      const end = skipListRest(this.expected, this.e, depth);
      if (end < 0) return this.undecided();
      this.e = end;
      this.a++;
    }
    return 'ARGUMENT_LIST_LENGTH_DIFFERENT';
  }
}

/** One walk runs at a time, so one pair object serves them all. */
const pair = new ArgumentPair();

/**
 * The first mismatch between the values `json.loads` gives the two texts (null when they match),
 * ARGUMENTS_DECODE_ERROR when only the actual text is not Python JSON, or UNDECIDED when the
 * texts need decoding for an answer (an invalid expected text, which NeMo Gym raises on, is one).
 */
export function compareArgumentTexts(
  expected: string,
  actual: string,
  floatThreshold: number,
  wordThreshold: number,
): ArgumentMismatch | 'ARGUMENTS_DECODE_ERROR' | null | typeof UNDECIDED {
  // A policy that gets the call right often repeats the expected text exactly. Equal texts decode
  // to equal values, and under these thresholds every value matches itself (a finite float's
  // difference with itself is 0, a string's word similarity with itself is 1 or 0.5), duplicate
  // keys or not, so one validating read of the text decides. Anything else takes the pair walk.
  if (expected === actual && floatThreshold > 0 && wordThreshold <= 0.5) {
    lastScan.floatMayNotBeFinite = false;
    if (isPythonJson(expected) === true && !lastScan.floatMayNotBeFinite) return null;
  }
  const step = pair.run(expected, actual, floatThreshold, wordThreshold);
  if (step !== STOP) return step === MATCH ? null : step;
  // The expected text is decoded first in NeMo Gym, so its own error would win.
  if (pair.stop === 'actual_invalid' && isPythonJson(expected) === true) return 'ARGUMENTS_DECODE_ERROR';
  return UNDECIDED;
}
