// The validator's fast path: a line is parsed with the native JSON.parse and put through the same
// row checks. It only ever accepts rows; a line it cannot parse and a row it would reject go to the
// exact path (CPython's decoder), so every message still comes from there.
//
// Why an accepted row is the one the exact path accepts, with the same metrics:
// - JSON.parse accepts a subset of what CPython's json.loads accepts. Both allow the same four
//   whitespace characters, the same escapes (lone surrogates included), no control characters in
//   strings and no leading zeros; JSON.parse refuses NaN/Infinity, which send the line to the exact
//   path. The exception is nesting beyond MAX_NESTING_DEPTH, checked below.
// - Where the two decoders differ on an accepted text, the checks do not look: they read object-ness,
//   own keys, strings, booleans, null and array lengths, never a number (int or float, rounded or
//   not), the order of keys or where a duplicate key first stood (its value is the last one in both).
import { MAX_NESTING_DEPTH } from '../pythonJson';
import { isBlank } from '../pythonJsonLexis';
import { decodeLineBytes } from './jsonlLines';
import { checkRow, type RowCheckOptions, type RowReader, type RowSummary } from './rowChecks';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `text`, which JSON.parse accepted, opens more than MAX_NESTING_DEPTH containers at
 * once. Read from the text, not the parsed value: a duplicate key can replace a too-deep value
 * that the exact decoder still fails on. Cheap in the common case, where the text does not even
 * hold that many opening brackets (strings included). */
function nestsTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_NESTING_DEPTH) return false;
  let brackets = 0;
  for (const open of ['{', '[']) {
    for (let at = text.indexOf(open); at !== -1 && brackets <= MAX_NESTING_DEPTH; at = text.indexOf(open, at + 1)) brackets++;
  }
  if (brackets <= MAX_NESTING_DEPTH) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      // Skip the string; the text is valid JSON, so an escaped character is never its end.
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > MAX_NESTING_DEPTH) return true;
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return false;
}

function parse(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return nestsTooDeep(text) ? undefined : { value };
}

const NOT_FOR_JSON_PARSE = 'left to the exact decoder';

const jsonParseReader: RowReader<unknown> = {
  isDict: isObject,
  has: (dict, key) => Object.hasOwn(dict as JsonObject, key),
  get: (dict, key) => (Object.hasOwn(dict as JsonObject, key) ? (dict as JsonObject)[key] : undefined),
  // Never shown: a rejected row is checked again on the exact path, whose message is reported.
  repr: (value) => JSON.stringify(value) ?? String(value),
  argumentsError: (text) => (parse(text) === undefined ? NOT_FOR_JSON_PARSE : undefined),
};

/** The row's summary when JSON.parse and the checks accept the line, else undefined. */
export function acceptRowFast(text: string, options: RowCheckOptions): RowSummary | undefined {
  const parsed = parse(text);
  if (parsed === undefined) return undefined;
  const result = checkRow(parsed.value, options, jsonParseReader);
  return result.ok ? result.summary : undefined;
}

/** What the fast path makes of one raw line: a blank line, an accepted row's summary, or undefined
 * for "take the exact path" (not UTF-8, not for JSON.parse, or a row some check rejects). */
export type LineOutcome = RowSummary | 'blank' | undefined;

export function acceptLineFast(bytes: Uint8Array, terminated: boolean, options: RowCheckOptions): LineOutcome {
  const text = decodeLineBytes(bytes, terminated);
  if (text === undefined) return undefined;
  if (isBlank(text)) return 'blank';
  return acceptRowFast(text, options);
}
