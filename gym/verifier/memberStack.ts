// Object members as bounds into their JSON text, for comparing objects whose keys do not pair up
// in order. One stack serves every comparison (they never interleave), so reading an object's
// members allocates nothing once the stack has grown to the deepest text seen.
import * as tokens from './argumentText';

// Bound imports: see gym/verifier/index.ts.
const { codeAt, INVALID, lastScan, nextCode, sameRegion, scanString, skipValueFrom, skipWhitespace } = tokens;

/** `pushMembers` met what only decoding decides: an escaped key, too many keys, too deep a value. */
export const UNDECIDED_MEMBERS = -3;
/** Keys one object may have here: finding a key is a linear search. */
export const MAX_KEYS_PER_OBJECT = 32;
/** Slots per member: key start, key end, value start, and where the value of the other object's
 * member with the same key starts, plus one (0 while none has been paired with it). */
export const SLOT = 4;

export class MemberStack {
  /** SLOT numbers per member; a key's bounds exclude its quotes. */
  readonly slots: number[] = [];
  top = 0;
  /** Where the last `pushMembers` ended: past the closing brace. */
  end = 0;

  push(keyStart: number, keyEnd: number, valueStart: number): void {
    const { slots } = this;
    slots[this.top] = keyStart;
    slots[this.top + 1] = keyEnd;
    slots[this.top + 2] = valueStart;
    slots[this.top + 3] = 0;
    this.top += SLOT;
  }

  /** The slot in [from, to) whose key in `text` is `probe[start:end]`, or -1. */
  find(text: string, from: number, to: number, probe: string, start: number, end: number): number {
    const { slots } = this;
    for (let slot = from; slot < to; slot += SLOT) {
      if (sameRegion(text, slots[slot] as number, slots[slot + 1] as number, probe, start, end)) return slot;
    }
    return -1;
  }

  /** Whether a key of `text` repeats among the slots in [from, to). */
  hasDuplicate(text: string, from: number, to: number): boolean {
    const { slots } = this;
    for (let slot = from + SLOT; slot < to; slot += SLOT) {
      if (this.find(text, from, slot, text, slots[slot] as number, slots[slot + 1] as number) >= 0) return true;
    }
    return false;
  }

  /**
   * Pushes the members from `index` (a member, or the closing brace unless `afterComma`) to the
   * end of the object, reading over their values. Returns their count, INVALID for a text that is
   * not Python JSON, or UNDECIDED_MEMBERS.
   */
  pushMembers(text: string, index: number, afterComma: boolean, depth: number): number {
    let count = 0;
    let code = codeAt(text, index);
    if (!afterComma && code === 0x7d) {
      this.end = index + 1;
      return 0;
    }
    for (;;) {
      if (code !== 0x22) return INVALID;
      const keyEnd = scanString(text, index + 1);
      if (keyEnd < 0) return INVALID;
      if (lastScan.stringHadEscape || ++count > MAX_KEYS_PER_OBJECT) return UNDECIDED_MEMBERS;
      const colon = skipWhitespace(text, keyEnd);
      if (nextCode() !== 0x3a) return INVALID;
      const valueStart = skipWhitespace(text, colon + 1);
      this.push(index + 1, keyEnd - 1, valueStart);
      index = skipValueFrom(text, valueStart, nextCode(), depth);
      if (index < 0) return index === INVALID ? INVALID : UNDECIDED_MEMBERS;
      index = skipWhitespace(text, index);
      const next = nextCode();
      if (next === 0x7d) break;
      if (next !== 0x2c) return INVALID;
      index = skipWhitespace(text, index + 1);
      code = nextCode();
    }
    this.end = index + 1;
    return count;
  }
}
