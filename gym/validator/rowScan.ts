// A byte-level JSON scanner for the validator's fast path. It proves a line is strict JSON (RFC 8259
// grammar, UTF-8, ASCII whitespace) and builds only the parts of the row the checks read, as a
// selector names them; the rest (the input items' text, the tools' schemas: nearly all the bytes of
// a long row) is checked for well-formedness and dropped. Strict JSON is a subset of what both
// JSON.parse and CPython's json.loads accept, so a scanned row is one the exact path decodes too,
// and every value the checks read is JSON.parse's value of the same bytes. Anything else (NaN,
// a BOM, nesting past the decoder's limit) comes back undefined for the other paths.
import { MAX_NESTING_DEPTH as DEPTH_LIMIT } from '../pythonJson';
import * as strictJson from './strictJson';

/** What to build of a value: all of it; whether it is null (null, else true); for an array only its
 * length; for an object only the named members; for an array each element by one selector. A
 * value of the wrong kind is built whole. A selector must not change once rows have been scanned
 * with it. */
export type Selector = 'value' | 'present' | 'length' | Members | { each: Selector };
export type Members = { keys: Map<string, Selector> };

// Taken out of the module object once: the CommonJS that TypeScript runs as reads an import through a
// getter on every call, which costs more than a short token.
const { FAILED, skipWhitespace, StrictJsonLine } = strictJson;
const MAX_NESTING_DEPTH = DEPTH_LIMIT;

const VALUE = 0;
const PRESENT = 1;
const LENGTH = 2;
const MEMBERS = 3;
const EACH = 4;

/** A selector compiled to one object shape, so the scanner's reads of it stay monomorphic. */
interface Plan {
  kind: typeof VALUE | typeof PRESENT | typeof LENGTH | typeof MEMBERS | typeof EACH;
  /** MEMBERS: the wanted names, their UTF-8 bytes and, index for index, what to build of each. */
  names: readonly string[];
  nameBytes: readonly Uint8Array[];
  plans: readonly Plan[];
  /** EACH: what to build of every element. */
  each: Plan | undefined;
}

const KINDS = { value: VALUE, present: PRESENT, length: LENGTH } as const;

/** What a key's raw bytes are compared with: the name in UTF-8, or, for a name with a lone
 * surrogate (no UTF-8 spells it), a quote, which a key never holds unescaped. */
const nameBytes = (name: string) => (Buffer.from(name).toString() === name ? Buffer.from(name) : Buffer.from('"'));

function compile(selector: Selector): Plan {
  if (typeof selector === 'string')
    return { kind: KINDS[selector], names: [], nameBytes: [], plans: [], each: undefined };
  if ('keys' in selector) {
    const names = [...selector.keys.keys()];
    return {
      kind: MEMBERS,
      names,
      nameBytes: names.map(nameBytes),
      plans: [...selector.keys.values()].map(compile),
      each: undefined,
    };
  }
  return { kind: EACH, names: [], nameBytes: [], plans: [], each: compile(selector.each) };
}

const plans = new WeakMap<Members, Plan>();

const QUOTE = 0x22;
const utf8 = new TextDecoder('utf-8');

/** Short strings read lately, by a hash of their bytes: the names the checks read (tools, agents,
 * action types) recur row after row, and a cache hit costs less than making the string again. */
const RECENT_MAX_LENGTH = 64;
const recent: string[] = new Array<string>(256).fill('');

function recentString(bytes: Buffer, start: number, end: number, hash: number): string {
  const slot = hash & 255;
  const cached = recent[slot] as string;
  if (cached.length === end - start) {
    let same = true;
    for (let k = 0; k < cached.length && same; k++) same = cached.charCodeAt(k) === bytes[start + k];
    if (same) return cached;
  }
  const text = bytes.toString('latin1', start, end);
  recent[slot] = text;
  return text;
}

/** Reads one line after another (see use()), so a row costs no scanner of its own. */
class Scanner {
  /** The value the last select() built. */
  value: unknown = undefined;
  private line = new StrictJsonLine(Buffer.alloc(0));
  private bytes = this.line.bytes;
  private end = 0;

  use(line: strictJson.StrictJsonLine): void {
    this.line = line;
    this.bytes = line.bytes;
    this.end = line.end;
  }

  /** Checks one value and builds what `plan` asks for into `value`. Returns its end or FAILED. */
  select(at: number, depth: number, plan: Plan): number {
    if (at >= this.end) return FAILED;
    const bytes = this.bytes;
    const c = bytes[at];
    if ((c === 0x7b && plan.kind === MEMBERS) || (c === 0x5b && (plan.kind === LENGTH || plan.kind === EACH))) {
      if (depth >= MAX_NESTING_DEPTH) return FAILED;
      return c === 0x7b ? this.object(at, depth + 1, plan) : this.array(at, depth + 1, plan);
    }
    if (c === QUOTE && plan.kind === VALUE) {
      // Most built values are strings without escapes: their content is read where it lies.
      const close = this.line.plainRun(at + 1);
      if (close < this.end && bytes[close] === QUOTE) {
        this.value = this.plainString(at + 1, close);
        return close + 1;
      }
    }
    const end = this.line.skipValue(at, depth);
    if (end !== FAILED) this.value = plan.kind === PRESENT ? (c === 0x6e ? null : true) : this.parse(at, end);
    return end;
  }

  /** String content without escapes: ASCII as Latin-1 (the short and recent from the cache), any
   * other as the UTF-8 it is. */
  private plainString(start: number, end: number): string {
    const bytes = this.bytes;
    let hash = 0;
    let ascii = true;
    for (let k = start; k < end && ascii; k++) {
      const byte = bytes[k] as number;
      ascii = byte < 0x80;
      hash = (hash * 31 + byte) | 0;
    }
    if (!ascii) return utf8.decode(bytes.subarray(start, end));
    return end - start <= RECENT_MAX_LENGTH
      ? recentString(bytes, start, end, hash)
      : bytes.toString('latin1', start, end);
  }

  /** Any other value: a literal, a number, a string with escapes, a whole array or object. */
  private parse(start: number, end: number): unknown {
    const bytes = this.bytes;
    // Literals are known by their first byte in strict JSON; no string or parse needed.
    const first = bytes[start];
    if (first === 0x74) return true;
    if (first === 0x66) return false;
    if (first === 0x6e) return null;
    let ascii = true;
    for (let k = start; k < end && ascii; k++) ascii = (bytes[k] as number) < 0x80;
    return JSON.parse(ascii ? bytes.toString('latin1', start, end) : utf8.decode(bytes.subarray(start, end)));
  }

  /** Which of the plan's names the key in [start, end) is, or -1 when none. */
  private member(plan: Plan, start: number, end: number, escaped: boolean): number {
    const bytes = this.bytes;
    const names = plan.nameBytes;
    const length = end - start;
    // Compared on the bytes: most keys are not wanted, and a string for each would cost more.
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as Uint8Array;
      if (name.length !== length) continue;
      let k = 0;
      while (k < length && name[k] === bytes[start + k]) k++;
      if (k === length) return i;
    }
    // An escaped key may still spell a wanted name.
    return escaped ? plan.names.indexOf(this.parse(start - 1, end + 1) as string) : -1;
  }

  /** An object built from its wanted members; the others are only checked. */
  private object(at: number, depth: number, plan: Plan): number {
    const bytes = this.bytes;
    const end = this.end;
    const built: Record<string, unknown> = {};
    at = skipWhitespace(bytes, at + 1, end);
    if (at < end && bytes[at] === 0x7d) {
      this.value = built;
      return at + 1;
    }
    for (;;) {
      if (at >= end || bytes[at] !== QUOTE) return FAILED;
      // Most keys are plain to their closing quote; one with an escape goes the long way.
      let keyEnd = this.line.plainRun(at + 1);
      const escaped = keyEnd >= end || bytes[keyEnd] !== QUOTE;
      keyEnd = escaped ? this.line.skipString(keyEnd) : keyEnd + 1;
      if (keyEnd === FAILED) return FAILED;
      const member = this.member(plan, at + 1, keyEnd - 1, escaped);
      at = skipWhitespace(bytes, keyEnd, end);
      if (at >= end || bytes[at] !== 0x3a) return FAILED;
      at = skipWhitespace(bytes, at + 1, end);
      if (member === -1) {
        at = this.line.skipValue(at, depth);
      } else {
        at = this.select(at, depth, plan.plans[member] as Plan);
        const name = plan.names[member] as string;
        // Later duplicates overwrite earlier ones, as in both decoders. A member named "__proto__"
        // is an own key, as JSON.parse makes it, not the object's prototype.
        if (name === '__proto__')
          Object.defineProperty(built, name, {
            value: this.value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else built[name] = this.value;
      }
      if (at === FAILED) return FAILED;
      at = skipWhitespace(bytes, at, end);
      if (at >= end) return FAILED;
      const next = bytes[at];
      if (next === 0x7d) {
        this.value = built;
        return at + 1;
      }
      if (next !== 0x2c) return FAILED;
      at = skipWhitespace(bytes, at + 1, end);
    }
  }

  /** An array built as the selector says: its length only, or each element by one selector. */
  private array(at: number, depth: number, plan: Plan): number {
    const bytes = this.bytes;
    const end = this.end;
    const each = plan.each;
    const built: unknown[] | undefined = each === undefined ? undefined : [];
    let length = 0;
    at = skipWhitespace(bytes, at + 1, end);
    if (at >= end || bytes[at] !== 0x5d) {
      for (;;) {
        at = each === undefined ? this.line.skipValue(at, depth) : this.select(at, depth, each);
        if (at === FAILED) return FAILED;
        length++;
        if (built !== undefined) built.push(this.value);
        at = skipWhitespace(bytes, at, end);
        if (at >= end) return FAILED;
        const next = bytes[at];
        if (next === 0x5d) break;
        if (next !== 0x2c) return FAILED;
        at = skipWhitespace(bytes, at + 1, end);
      }
    }
    this.value = built ?? new Array(length);
    return at + 1;
  }
}

const scanner = new Scanner();

/**
 * The row a line holds, with only what `selector` names built, or undefined when the line is not
 * one strict-JSON object (blank lines included). The line is `line.bytes[start, line.end)`
 * without its terminator, and known to be UTF-8.
 */
export function scanRow(
  line: strictJson.StrictJsonLine,
  start: number,
  selector: Members,
): Record<string, unknown> | undefined {
  const { bytes, end } = line;
  const first = skipWhitespace(bytes, start, end);
  if (first >= end || bytes[first] !== 0x7b) return undefined;
  let plan = plans.get(selector);
  if (plan === undefined) {
    plan = compile(selector);
    plans.set(selector, plan);
  }
  scanner.use(line);
  const last = scanner.select(first, 0, plan);
  if (last === FAILED || skipWhitespace(bytes, last, end) !== end) return undefined;
  return scanner.value as Record<string, unknown>;
}
