// Two objects on the side-by-side walk over two `arguments` texts (argumentPair.ts). While their
// keys pair up in order (the common case) the values are compared as they come; from the first
// member where they do not, the rest is compared as Python compares dicts: key sets first, then
// values in expected key order.
import * as tokens from './argumentText';
import * as memberStack from './memberStack';
import * as pairWalk from './pairWalk';
import type { PairWalk, Step } from './pairWalk';

// Bound imports: see gym/verifier/index.ts.
const { codeAt, INVALID, lastScan, nextCode, scanString, scanStringAgainst, skipValueFrom, skipWhitespace } = tokens;
const { MAX_KEYS_PER_OBJECT, SLOT } = memberStack;
const { MATCH, STOP } = pairWalk;

/** The keys of two objects stop pairing up in order. */
const DIVERGED = 'DIVERGED';

/** The members of the objects open on the walk. A walk that stops leaves its own behind, so every
 * walk starts by emptying it. */
export const members = new memberStack.MemberStack();

/** After `{` on both sides: the verdict on the two objects, with both cursors moved past them. */
export function compareObjects(walk: PairWalk, depth: number): Step {
  const { expected, actual } = walk;
  walk.e = skipWhitespace(expected, walk.e);
  let e = nextCode();
  walk.a = skipWhitespace(actual, walk.a);
  let a = nextCode();
  const prefixBase = members.top;
  let step: Step = MATCH;
  if (e !== 0x7d || a !== 0x7d) {
    for (;;) {
      const key = sameNewKey(walk, prefixBase, e, a);
      if (key === STOP) return STOP;
      if (key === DIVERGED) {
        const afterComma = members.top > prefixBase;
        return unorderedRest(walk, prefixBase, step, afterComma, afterComma, depth);
      }
      walk.e = skipWhitespace(expected, walk.e);
      if (nextCode() !== 0x3a) return walk.undecided();
      walk.a = skipWhitespace(actual, walk.a);
      if (nextCode() !== 0x3a) return walk.actualInvalid();
      walk.e = skipWhitespace(expected, walk.e + 1);
      const valueOpen = nextCode();
      walk.a = skipWhitespace(actual, walk.a + 1);
      // Past the first mismatch the values are only read over, yet the keys still have to pair.
      step = step === MATCH ? walk.value(depth, valueOpen, nextCode()) : walk.skipBoth(step, depth);
      if (step === STOP) return STOP;
      walk.e = skipWhitespace(expected, walk.e);
      e = nextCode();
      walk.a = skipWhitespace(actual, walk.a);
      a = nextCode();
      if (e !== 0x7d && e !== 0x2c) return walk.undecided();
      if (a !== 0x7d && a !== 0x2c) return walk.actualInvalid();
      if (e !== a) {
        // One object has more members (or a trailing comma) than the other.
        if (e === 0x2c) walk.e = skipWhitespace(expected, walk.e + 1);
        else walk.a = skipWhitespace(actual, walk.a + 1);
        return unorderedRest(walk, prefixBase, step, e === 0x2c, a === 0x2c, depth);
      }
      if (e === 0x7d) break;
      walk.e = skipWhitespace(expected, walk.e + 1);
      e = nextCode();
      walk.a = skipWhitespace(actual, walk.a + 1);
      a = nextCode();
    }
  }
  walk.e++;
  walk.a++;
  members.top = prefixBase;
  return step;
}

/** Reads the key at both cursors (where the texts hold `e` and `a`) when it is the same raw text
 * on both sides, unescaped and new in its object; DIVERGED (cursors left alone) when the keys do
 * not pair up that way. */
function sameNewKey(
  walk: PairWalk,
  prefixBase: number,
  e: number,
  a: number,
): typeof MATCH | typeof STOP | typeof DIVERGED {
  const { expected, actual } = walk;
  if (e !== 0x22 || a !== 0x22) return DIVERGED;
  const start = walk.e + 1;
  const end = scanStringAgainst(expected, start, actual, walk.a + 1);
  if (end < 0) return walk.undecided();
  // An unescaped key, quotes included, that the actual text repeats code unit for code unit is
  // the same key there, and a valid one.
  if (lastScan.stringHadEscape || !lastScan.sameInOther) return DIVERGED;
  if (members.top - prefixBase >= SLOT * MAX_KEYS_PER_OBJECT) return walk.undecided();
  if (members.find(expected, prefixBase, members.top, expected, start, end - 1) >= 0) return DIVERGED;
  members.push(start, end - 1, -1);
  walk.a += end - walk.e;
  walk.e = end;
  return MATCH;
}

/**
 * The members from the cursors on, after a prefix whose keys paired up in order (their slots
 * from `prefixBase`, values already compared into `prefixStep`). Python compares dicts by key
 * set first, then values in expected key order, so the prefix's verdict comes before the rest's.
 * Both objects are read over first: the expected members listed, each actual key paired with its
 * slot. Only when the key sets are equal are values compared, in expected order up to the first
 * mismatch, because a differing key set is the verdict whatever the values hold.
 */
function unorderedRest(
  walk: PairWalk,
  prefixBase: number,
  prefixStep: Step,
  expectedAfterComma: boolean,
  actualAfterComma: boolean,
  depth: number,
): Step {
  const { expected, actual } = walk;
  const { slots } = members;
  const restBase = members.top;
  const expectedCount = members.pushMembers(expected, walk.e, expectedAfterComma, depth);
  // Python keeps the last of duplicate keys in the first one's place; the decoding path does that.
  if (expectedCount < 0 || members.hasDuplicate(expected, prefixBase, members.top)) return walk.undecided();
  const expectedEnd = members.end;
  const restTop = members.top;
  let keysDiffer = false;
  let actualCount = 0;
  let index = walk.a;
  let code = codeAt(actual, index);
  if (actualAfterComma || code !== 0x7d) {
    for (;;) {
      if (code !== 0x22) return walk.actualInvalid();
      const keyEnd = scanString(actual, index + 1);
      if (keyEnd < 0) return walk.actualInvalid();
      if (lastScan.stringHadEscape) return walk.undecided();
      actualCount++;
      const colon = skipWhitespace(actual, keyEnd);
      if (nextCode() !== 0x3a) return walk.actualInvalid();
      const valueStart = skipWhitespace(actual, colon + 1);
      const valueCode = nextCode();
      const slot = members.find(expected, restBase, restTop, actual, index + 1, keyEnd - 1);
      if (slot < 0 || slots[slot + 3] !== 0) {
        // A key seen before (in the prefix or earlier in this rest) is a duplicate.
        if (slot >= 0 || members.find(expected, prefixBase, restBase, actual, index + 1, keyEnd - 1) >= 0)
          return walk.undecided();
        keysDiffer = true;
      } else {
        slots[slot + 3] = valueStart + 1;
      }
      const end = skipValueFrom(actual, valueStart, valueCode, depth);
      if (end < 0) return end === INVALID ? walk.actualInvalid() : walk.undecided();
      index = skipWhitespace(actual, end);
      const next = nextCode();
      if (next === 0x7d) break;
      if (next !== 0x2c) return walk.actualInvalid();
      index = skipWhitespace(actual, index + 1);
      code = nextCode();
    }
  }
  const actualEnd = index + 1;
  let step = prefixStep;
  if (keysDiffer || actualCount !== expectedCount) step = 'ARGUMENT_OBJECT_KEYS_DIFFERENT';
  else if (step === MATCH) {
    // Stopping at the first mismatch, as Python does, is safe here: both objects have been read
    // whole, so no value left uncompared can still make either text invalid.
    for (let slot = restBase; slot < restTop && step === MATCH; slot += SLOT) {
      walk.e = slots[slot + 2] as number;
      walk.a = (slots[slot + 3] as number) - 1;
      step = walk.value(depth, codeAt(expected, walk.e), codeAt(actual, walk.a));
    }
    if (step === STOP) return STOP;
  }
  walk.e = expectedEnd;
  walk.a = actualEnd;
  members.top = prefixBase;
  return step;
}
