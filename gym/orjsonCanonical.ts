import { orjsonFloatRepr } from './pythonJsonDumps';

// NeMo Gym reads an agent's `/run` answer with orjson and writes it back with orjson, with its keys
// added (rollout_collection.py). When the answer's bytes are already what `orjson.dumps` would write
// for them, the line NeMo Gym writes is those bytes with the keys spliced in before the closing
// brace, and decoding and re-encoding a result of many kilobytes can be skipped. This scanner says
// whether a text is in that form, and where its top-level entries lie. It answers no for anything
// orjson would write differently, and then the caller decodes and re-encodes as before:
// - whitespace between tokens (orjson writes none);
// - a string escape orjson would not write: it escapes only `"`, `\` and control characters, the
//   usual five by letter and the rest as `\u00xx` in lower-case hex;
// - a number whose lexeme orjson would write differently: `-0`, `1.50`, `1E5`, `1e-05`, or an int of
//   19 digits and more (orjson reads one beyond 64 bits as a float);
// - a key twice in one object (orjson keeps one entry);
// - nesting deeper than pythonJson's limit, or a text that is not JSON at all.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** orjson's recursion limit is 1024; past this depth the caller's decoder gives the error. */
const MAX_DEPTH = 512;
/** Objects with more keys than this look for a repeated key through a Set rather than pairwise. */
const PAIRWISE_KEYS = 16;
/** Int lexemes this long may leave orjson's 64-bit range. */
const LONG_INT_DIGITS = 19;

/** One entry of an object: its key as written (canonical escapes are unique, so this names it), where
 * the entry starts (its key's opening quote), where its value starts, and where the value ends. */
export interface CanonicalEntry {
  key: string;
  start: number;
  valueStart: number;
  end: number;
}

export interface CanonicalObject {
  entries: CanonicalEntry[];
  /** The entries of the object under `nestedKey`, when it is an object. */
  nested?: CanonicalEntry[];
}

/** orjson escapes every control character, and JSON allows none raw, in strings or between tokens. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const RAW_CONTROL = /[\u0000-\u001f]/;
/** Half of a surrogate pair on its own: no UTF-8 text holds one, and orjson refuses to write one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function lowerHexValue(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/** One pass over one text; `pos` is where the next token starts, -1 once the text is refused. */
class Scanner {
  private pos = 0;
  /** Where the keys of the object open at each depth lie (inside their quotes), reused from object
   * to object: keys are compared where they lie, and only a recorded entry's key becomes a string. */
  private readonly keyStartsAt: number[][] = [];
  private readonly keyEndsAt: number[][] = [];
  /** The first backslash at or after the last place looked from (the text's length when none). */
  private backslash = -1;

  constructor(private readonly text: string) {}

  object(
    depth: number,
    record?: CanonicalEntry[],
    nestedKey?: string,
    nested?: { entries?: CanonicalEntry[] },
  ): boolean {
    const t = this.text;
    if (depth > MAX_DEPTH) return false;
    this.pos++;
    if (t.charCodeAt(this.pos) === CLOSE_BRACE) {
      this.pos++;
      return true;
    }
    const starts = (this.keyStartsAt[depth] ??= []);
    const ends = (this.keyEndsAt[depth] ??= []);
    let keys = 0;
    for (;;) {
      const start = this.pos;
      if (t.charCodeAt(start) !== QUOTE || !this.string()) return false;
      starts[keys] = start + 1;
      ends[keys] = this.pos - 1;
      keys++;
      if (t.charCodeAt(this.pos) !== COLON) return false;
      const valueStart = ++this.pos;
      if (nested && isKey(t, start, valueStart, nestedKey) && t.charCodeAt(valueStart) === OPEN_BRACE) {
        nested.entries = [];
        if (!this.object(depth + 1, nested.entries)) return false;
      } else if (!this.value(depth + 1)) return false;
      record?.push({ key: t.slice(start + 1, valueStart - 2), start, valueStart, end: this.pos });
      const next = t.charCodeAt(this.pos++);
      if (next === COMMA) continue;
      if (next === CLOSE_BRACE) return !hasRepeat(t, starts, ends, keys);
      return false;
    }
  }

  value(depth: number): boolean {
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    if (c === QUOTE) return this.string();
    if (c === OPEN_BRACE) return this.object(depth);
    if (c === OPEN_BRACKET) return this.array(depth);
    if (c === MINUS || isDigit(c)) return this.number();
    return this.literal('true') || this.literal('false') || this.literal('null');
  }

  private array(depth: number): boolean {
    const t = this.text;
    if (depth > MAX_DEPTH) return false;
    this.pos++;
    if (t.charCodeAt(this.pos) === CLOSE_BRACKET) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (!this.value(depth + 1)) return false;
      const next = t.charCodeAt(this.pos++);
      if (next === COMMA) continue;
      return next === CLOSE_BRACKET;
    }
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  /**
   * A string at `pos` (its opening quote), with only the escapes orjson writes. The text has no raw
   * control character and no lone surrogate (orjsonCanonicalObject looked first), so a string is
   * read by jumping from quote to quote and checking the escapes between them.
   */
  private string(): boolean {
    const t = this.text;
    let i = this.pos + 1;
    for (;;) {
      const quote = t.indexOf('"', i);
      if (quote < 0) return false;
      if (this.backslash < i) {
        const found = t.indexOf('\\', i);
        this.backslash = found < 0 ? t.length : found;
      }
      if (this.backslash > quote) {
        this.pos = quote + 1;
        return true;
      }
      i = this.backslash;
      const e = t.charCodeAt(i + 1);
      // \" \\ \b \t \n \f \r
      if (e === QUOTE || e === BACKSLASH || e === 0x62 || e === 0x74 || e === 0x6e || e === 0x66 || e === 0x72) {
        i += 2;
        continue;
      }
      if (e !== 0x75 || t.charCodeAt(i + 2) !== ZERO || t.charCodeAt(i + 3) !== ZERO) return false;
      const high = t.charCodeAt(i + 4) - ZERO;
      const low = lowerHexValue(t.charCodeAt(i + 5));
      if ((high !== 0 && high !== 1) || low < 0) return false;
      const code = high * 16 + low;
      // Backspace, tab, newline, form feed and carriage return have letter escapes.
      if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return false;
      i += 6;
    }
  }

  private number(): boolean {
    const t = this.text;
    const start = this.pos;
    let i = start;
    if (t.charCodeAt(i) === MINUS) i++;
    const digits = i;
    if (t.charCodeAt(i) === ZERO) i++;
    else if (isDigit(t.charCodeAt(i))) while (isDigit(t.charCodeAt(i))) i++;
    else return false;
    const intDigits = i - digits;
    let float = false;
    if (t.charCodeAt(i) === DOT) {
      i++;
      if (!isDigit(t.charCodeAt(i))) return false;
      while (isDigit(t.charCodeAt(i))) i++;
      float = true;
    }
    const e = t.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = t.charCodeAt(i);
      if (sign === MINUS || sign === PLUS) i++;
      if (!isDigit(t.charCodeAt(i))) return false;
      while (isDigit(t.charCodeAt(i))) i++;
      float = true;
    }
    this.pos = i;
    if (float) {
      const lexeme = t.slice(start, i);
      return orjsonFloatRepr(Number(lexeme)) === lexeme;
    }
    // `-0` reads as the int 0, written `0`.
    if (intDigits === 1 && digits > start && t.charCodeAt(digits) === ZERO) return false;
    return intDigits < LONG_INT_DIGITS;
  }

  /** The whole text is one value and nothing after it. */
  atEnd(): boolean {
    return this.pos === this.text.length;
  }
}

/** Whether the entry starting at `start` (its key's opening quote), its value at `valueStart`, has the key `key`. */
function isKey(t: string, start: number, valueStart: number, key: string | undefined): boolean {
  return key !== undefined && valueStart - start - 3 === key.length && t.startsWith(key, start + 1);
}

/** Whether the text between `starts[i]` and `ends[i]` is the same for two of the first `n` keys. */
function hasRepeat(t: string, starts: readonly number[], ends: readonly number[], n: number): boolean {
  if (n < 2) return false;
  if (n > PAIRWISE_KEYS) {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) seen.add(t.slice(starts[i], ends[i]));
    return seen.size !== n;
  }
  for (let a = 1; a < n; a++) {
    for (let b = 0; b < a; b++) if (sameText(t, starts[a]!, ends[a]!, starts[b]!, ends[b]!)) return true;
  }
  return false;
}

function sameText(t: string, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 0; i < aEnd - aStart; i++) if (t.charCodeAt(aStart + i) !== t.charCodeAt(bStart + i)) return false;
  return true;
}

/**
 * The top-level entries of `text` (and of the object under `nestedKey` in it) when `text` is a JSON
 * object exactly as `orjson.dumps(orjson.loads(text))` writes it; undefined otherwise.
 */
export function orjsonCanonicalObject(text: string, nestedKey?: string): CanonicalObject | undefined {
  if (text.charCodeAt(0) !== OPEN_BRACE || RAW_CONTROL.test(text) || LONE_SURROGATE.test(text)) return undefined;
  const scanner = new Scanner(text);
  const entries: CanonicalEntry[] = [];
  const nested: { entries?: CanonicalEntry[] } = {};
  if (!scanner.object(1, entries, nestedKey, nested) || !scanner.atEnd()) return undefined;
  return nested.entries ? { entries, nested: nested.entries } : { entries };
}
