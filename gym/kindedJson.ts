import { decodePythonJson, PythonJsonFailure, type PyDict, type PyValue } from './pythonJson';

// NeMo Gym reads and writes its JSONL with orjson, where a number's lexeme decides int or float, so
// a `1.0` from an agent or an input row comes back out as `1.0`. JSON.parse forgets that (and
// loses ints beyond 2^53, and moves integer-like keys first), so a text that may hold such a lexeme
// is also decoded by the CPython-semantics scanner, whose PyValue keeps what JSON.parse lost. Most
// texts have none, and then the plain value is the kinded one too: the hot path parses once.

/**
 * A JSON object either plain (every integral number an int; its top-level values may be PyDicts)
 * or a PyDict (Python kinds throughout).
 */
export type JsonDict = Record<string, unknown> | PyDict;

/** A text's value as JSON.parse gives it, to read fields from, and with Python number kinds, to write back. */
export interface KindedJson {
  plain: unknown;
  kinded: unknown;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** `"digits"` in canonical form, which a JS object lists before every other key. */
function isIntegerLike(text: string, start: number, end: number): boolean {
  if (end === start || (text.charCodeAt(start) === ZERO && end - start > 1)) return false;
  for (let i = start; i < end; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Whether JSON.parse changes something in `text` (valid JSON) that orjson keeps: a float lexeme
 * that may be integral (only zeros after the point, or an exponent), 16 digits and more (may
 * exceed 2^53), or an integer-like key. Strings are skipped with indexOf, so the cost follows the
 * structure, not the length of the text.
 */
function losesKinds(text: string): boolean {
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      let next = end + 1;
      while (next < length && text.charCodeAt(next) <= 0x20) next++;
      if (text.charCodeAt(next) === 0x3a && isIntegerLike(text, i + 1, end)) return true;
      i = end + 1;
    } else if (code === MINUS || isDigit(code)) {
      const digits = code === MINUS ? i + 1 : i;
      let j = digits;
      while (isDigit(text.charCodeAt(j))) j++;
      if (j - digits >= 16) return true;
      if (text.charCodeAt(j) === DOT) {
        let zeros = true;
        for (j++; isDigit(text.charCodeAt(j)); j++) zeros &&= text.charCodeAt(j) === ZERO;
        if (zeros) return true;
      }
      const exponent = text.charCodeAt(j);
      if (exponent === 0x65 || exponent === 0x45) return true;
      i = j;
    } else {
      i++;
    }
  }
  return false;
}

/** Bounds of orjson's integers: `orjson.loads` reads a longer int lexeme as a float. */
const ORJSON_INT_MIN = -(2n ** 63n);
const ORJSON_INT_MAX = 2n ** 64n - 1n;

/** A JSON object's `text` read as orjson reads it, given JSON.parse's value of it (which has validated it). */
export function kindedFrom(text: string, plain: unknown): unknown {
  if (!losesKinds(text)) return plain;
  const kinded = decodePythonJson(text);
  if (kinded instanceof PythonJsonFailure) throw kinded.toError();
  return /[0-9]{19}/.test(text) ? withOrjsonIntRange(kinded) : kinded;
}

export function parseKinded(text: string): KindedJson {
  const plain: unknown = JSON.parse(text);
  return { plain, kinded: kindedFrom(text, plain) };
}

function withOrjsonIntRange(value: PyValue): PyValue {
  if (typeof value === 'bigint') return value < ORJSON_INT_MIN || value > ORJSON_INT_MAX ? Number(value) : value;
  if (Array.isArray(value)) return value.map(withOrjsonIntRange);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, withOrjsonIntRange(v)]));
  return value;
}

/** A plain JSON value as a PyValue: integral numbers are ints; a PyDict inside is kept as it is. */
export function toPy(value: unknown): PyValue {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toPy);
  if (value instanceof Map) return value as PyDict;
  if (value !== null && typeof value === 'object') {
    return new Map(
      Object.entries(value).flatMap(([k, v]) => (v === undefined ? [] : [[k, toPy(v)] as [string, PyValue]])),
    );
  }
  return (value ?? null) as PyValue;
}

/**
 * A plain dict as a PyDict whose integral numbers under `floatKeys` are Python floats: fields NeMo
 * Gym types `float`, such as a reward, are written `1.0` even when they hold an integer.
 */
export function withPythonFloats(dict: Record<string, unknown>, floatKeys: readonly string[]): PyDict {
  const py = toPy(dict) as PyDict;
  for (const key of floatKeys) {
    const value = py.get(key);
    if (typeof value === 'bigint') py.set(key, Number(value));
  }
  return py;
}

export function isJsonDict(value: unknown): value is JsonDict {
  return value instanceof Map || (value !== null && typeof value === 'object' && !Array.isArray(value));
}

export function dictGet(dict: JsonDict, key: string): unknown {
  return dict instanceof Map ? dict.get(key) : dict[key];
}

/** `dict[key] = value` in place, `value` plain JSON or a PyDict. */
export function dictSet(dict: JsonDict, key: string, value: unknown): void {
  if (dict instanceof Map) dict.set(key, toPy(value));
  else dict[key] = value;
}

/** A copy of `dict`'s top level, of its kind; what is below it is shared. */
export function shallowCopyDict(dict: JsonDict): JsonDict {
  return dict instanceof Map ? new Map(dict) : { ...dict };
}

/** The entries of `dict` under `keys`, in that order, of the same kind as `dict`. */
export function pickEntries(dict: JsonDict, keys: readonly string[]): JsonDict {
  if (dict instanceof Map) return new Map(keys.map((k) => [k, dict.get(k) ?? null]));
  return Object.fromEntries(keys.map((k) => [k, dict[k]]));
}

/**
 * A shallow copy of `dict` with `entries` assigned as Python assigns them: a key already there keeps
 * its place, a new one goes last. `entries` is plain JSON (whose values may be PyDicts) or a PyDict,
 * which can carry integral floats; the copy is a PyDict when either is.
 */
export function withEntries(dict: JsonDict, entries: JsonDict): JsonDict {
  if (!(dict instanceof Map) && !(entries instanceof Map)) return { ...dict, ...entries };
  const copy = dict instanceof Map ? new Map(dict) : (toPy(dict) as PyDict);
  if (entries instanceof Map) for (const [k, v] of entries) copy.set(k, v);
  else for (const [k, v] of Object.entries(entries)) if (v !== undefined) copy.set(k, toPy(v));
  return copy;
}
