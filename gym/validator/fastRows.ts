// The validator's fast path: a line is scanned as strict JSON (gym/validator/rowScan.ts), which builds
// only the members the row checks read, and put through the same checks. It only ever accepts rows;
// a line it cannot scan and a row it would reject go to the exact path (CPython's decoder), so every
// message still comes from there.
//
// Why an accepted row is the one the exact path accepts, with the same metrics:
// - Strict JSON is a subset of what CPython's json.loads (and JSON.parse) accepts: the same four
//   whitespace characters, the same escapes (lone surrogates included), no control characters in
//   strings, no leading zeros, no NaN/Infinity, nesting within MAX_NESTING_DEPTH.
// - Every value the checks read is built by JSON.parse from its own bytes. Where JSON.parse and CPython
//   differ on an accepted text, the checks do not look: they read object-ness, own keys, strings,
//   booleans, null and array lengths, never a number (int or float, rounded or not), the order of
//   keys or where a duplicate key first stood (its value is the last one in both).
// - `function_call.arguments` is a string the checks decode: JSON.parse, bounded to the same depth.
import { MAX_NESTING_DEPTH } from '../pythonJson';
import { isBlank } from '../pythonJsonLexis';
import { decodeLineBytes, type LineSpan } from './jsonlLines';
import { scanRow, type Members, type Selector } from './rowScan';
import { StrictJsonLine } from './strictJson';
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
    for (let at = text.indexOf(open); at !== -1 && brackets <= MAX_NESTING_DEPTH; at = text.indexOf(open, at + 1))
      brackets++;
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

/** Everything checkRow reads of a row, and nothing more: the input list only for its length, of each
 * tool only its names. Dotted paths the options require are built to their end, where only
 * whether the value is null is read. */
function rowSelector(options: FastRowOptions): Members {
  const tool: Members = {
    keys: new Map<string, Selector>([
      ['name', 'value'],
      ['function', { keys: new Map([['name', 'value']]) }],
    ]),
  };
  const params: Members = {
    keys: new Map<string, Selector>([
      ['metadata', 'value'],
      ['tool_choice', 'value'],
      ['input', 'length'],
      ['tools', options.checkToolNames ? { each: tool } : 'length'],
      ['parallel_tool_calls', 'value'],
    ]),
  };
  // Members rather than whole values: a string member is a slice of the line, a whole object a
  // JSON.parse, which on short rows costs as much as scanning the rest.
  const action: Members = {
    keys: new Map<string, Selector>(
      ['type', 'content', 'name', 'arguments', ...(options.batchActions ? ['calls'] : [])].map((key) => [key, 'value']),
    ),
  };
  const agentRef: Members = {
    keys: new Map<string, Selector>([
      ['type', 'value'],
      ['name', 'value'],
    ]),
  };
  const row: Members = {
    keys: new Map<string, Selector>([
      ['responses_create_params', params],
      ['expected_action', action],
      ['agent_ref', agentRef],
    ]),
  };
  for (const path of [...options.requireFields, ...options.requireAnyFields.flat()]) {
    let members: Members = row;
    const segments = path.split('.');
    for (const [i, segment] of segments.entries()) {
      const existing = members.keys.get(segment);
      const last = i === segments.length - 1;
      if (existing === undefined || (existing === 'present' && !last)) {
        const next: Members = { keys: new Map() };
        members.keys.set(segment, last ? 'present' : next);
        members = next;
      } else if (typeof existing === 'object' && 'keys' in existing) {
        members = existing;
      } else {
        // Built whole, an end already asked for, or an array, which no further segment gets through.
        break;
      }
    }
  }
  return row;
}

const selectors = new WeakMap<FastRowOptions, Members>();

/** What the fast path makes of one raw line: a blank line, an accepted row's summary, or undefined
 * for "take the exact path" (not UTF-8, not strict JSON, or a row some check rejects). */
export type LineOutcome = RowSummary | 'blank' | undefined;

/** The row checks' options as they cross to a thread: a function cannot, so a Gym config's agent
 * check comes as the names it accepts; a row naming any other agent takes the exact path. */
export type FastRowOptions = Omit<RowCheckOptions, 'checkAgentName'> & { acceptedAgents?: ReadonlySet<string> };

/** The strict-JSON view of the buffer lines were last read from: one per buffer, not per line. */
let lastLine = new StrictJsonLine(Buffer.alloc(0));

export function acceptLineFast(line: LineSpan, options: FastRowOptions): LineOutcome {
  let selector = selectors.get(options);
  if (selector === undefined) {
    selector = rowSelector(options);
    selectors.set(options, selector);
  }
  if (line.utf8) {
    if (lastLine.bytes !== line.buffer) lastLine = new StrictJsonLine(line.buffer);
    lastLine.end = line.end;
    const row = scanRow(lastLine, line.start, selector);
    if (row !== undefined) {
      const result = checkRow(row, options, jsonParseReader);
      return result.ok && (options.acceptedAgents?.has(result.summary.agentName) ?? true) ? result.summary : undefined;
    }
  }
  const text = decodeLineBytes(line.buffer.subarray(line.start, line.end), line.terminated);
  return text !== undefined && isBlank(text) ? 'blank' : undefined;
}
