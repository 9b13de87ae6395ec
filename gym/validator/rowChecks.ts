// The per-row checks of NeMo Gym's validate_pivot_dataset.py, in its order and with its wording.
// They read the row through a RowReader: Python's decoded values (types as Python has them,
// `isinstance(x, dict)` is a Map) for the exact path, or JSON.parse's values for the fast path.
// Loops are indexed, not for-of: every validator thread optimizes these functions anew, and array
// iterators made checkRow the costliest function to compile, a cost each thread pays again.
import { decodePythonJson, isPyDict, PythonJsonFailure, type PyValue } from '../pythonJson';
import { pythonStrip } from '../pythonJsonLexis';
import { pyRepr, pyReprString } from './pythonRepr';

/** How the checks read a decoded row. Arrays are JavaScript arrays and strings, booleans and null
 * are themselves in both representations; objects and the decoder differ. */
export interface RowReader<V> {
  isDict(value: V | undefined): boolean;
  /** Own keys only: `toString` or `__proto__` are present only if the row has them. */
  has(dict: V, key: string): boolean;
  get(dict: V, key: string): V | undefined;
  /** Python's `repr` of a value, for the two messages that quote one. */
  repr(value: V | undefined): string;
  /** The decoder's error text for `function_call.arguments`, or undefined when they decode. */
  argumentsError(text: string): string | undefined;
}

/** Rows as CPython's json decodes them: the reader whose messages are the reference's. */
export const pythonRowReader: RowReader<PyValue> = {
  isDict: isPyDict,
  has: (dict, key) => isPyDict(dict) && dict.has(key),
  get: (dict, key) => (isPyDict(dict) ? dict.get(key) : undefined),
  repr: pyRepr,
  argumentsError(text) {
    const decoded = decodePythonJson(text);
    return decoded instanceof PythonJsonFailure ? decoded.toError().message : undefined;
  },
};

/** How the reference reads one `--require-any-field` value: comma-separated, each name stripped of
 * Python whitespace, empty names dropped. */
export function parseRequireAnyField(value: string): string[] {
  return value
    .split(',')
    .map(pythonStrip)
    .filter((name) => name !== '');
}

export interface RowCheckOptions {
  agentRef?: string;
  requireFields: readonly string[];
  /** Groups already split and trimmed; empty groups are ignored. */
  requireAnyFields: readonly (readonly string[])[];
  checkToolNames: boolean;
  /** Extra agent check run right after the reference's agent_ref checks; returns a message on failure. */
  checkAgentName?: (name: string) => string | undefined;
  /**
   * Accept `function_call_batch` actions (NeMo Gym 0.5.1's verifier scores them), each call checked
   * as the reference checks a function_call. Off, as in the reference script, which refuses them.
   */
  batchActions?: boolean;
}

/** What a valid row contributes to the metrics block. */
export interface RowSummary {
  agentName: string;
  actionType: 'function_call' | 'message' | 'function_call_batch';
  /** The function_call name; absent for message rows. */
  toolName?: string;
  /** Each call's name, for a function_call_batch row. */
  batchToolNames?: string[];
  inputItems: number;
  tools: number;
}

export type RowCheckResult = { ok: true; summary: RowSummary } | { ok: false; message: string };

const requiredKeys = ['responses_create_params', 'expected_action', 'agent_ref'] as const;

function fail(message: string): RowCheckResult {
  return { ok: false, message };
}

// Paths are few and fixed per run while rows are many, so each is split once.
const pathSegments = new Map<string, readonly string[]>();

/** A dotted path is present when every step is an own key of an object and the end is not null. */
export function hasFieldPath<V>(row: V, path: string, reader: RowReader<V>): boolean {
  let segments = pathSegments.get(path);
  if (segments === undefined) {
    segments = path.split('.');
    pathSegments.set(path, segments);
  }
  let current: V | undefined = row;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (!reader.isDict(current) || !reader.has(current as V, segment)) return false;
    current = reader.get(current as V, segment);
  }
  return current !== null;
}

/** Whether a `tools` list offers `name`: an entry's own string `name` wins even when empty (and
 * then hides `function.name`); empty names offer nothing. */
export function offersTool<V>(tools: readonly V[], name: string, reader: RowReader<V>): boolean {
  if (name === '') return false;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as V;
    if (!reader.isDict(tool)) continue;
    const own = reader.get(tool, 'name');
    if (typeof own === 'string') {
      if (own === name) return true;
      continue;
    }
    const fn = reader.get(tool, 'function');
    if (reader.isDict(fn) && reader.get(fn as V, 'name') === name) return true;
  }
  return false;
}

function checkAgentRef<V>(agentRef: V | undefined, options: RowCheckOptions, reader: RowReader<V>): string | undefined {
  if (!reader.isDict(agentRef)) return 'agent_ref must be an object';
  if (reader.get(agentRef as V, 'type') !== 'responses_api_agents')
    return 'agent_ref.type must be responses_api_agents';
  const name = reader.get(agentRef as V, 'name');
  if (typeof name !== 'string' || name === '') return 'agent_ref.name must be a non-empty string';
  if (options.agentRef !== undefined && name !== options.agentRef) {
    return `agent_ref.name ${pyReprString(name)} does not match expected ${pyReprString(options.agentRef)}`;
  }
  return options.checkAgentName?.(name);
}

function checkParams<V>(value: V | undefined, reader: RowReader<V>): string | undefined {
  if (!reader.isDict(value)) return 'responses_create_params must be an object';
  const params = value as V;
  if (reader.has(params, 'metadata') && reader.get(params, 'metadata') === null) {
    return 'responses_create_params.metadata must be omitted or non-null';
  }
  if (reader.has(params, 'tool_choice') && reader.get(params, 'tool_choice') !== 'auto') {
    return `responses_create_params.tool_choice should be 'auto', found ${reader.repr(reader.get(params, 'tool_choice'))}`;
  }
  const input = reader.get(params, 'input');
  if (!Array.isArray(input) || input.length === 0) return 'responses_create_params.input must be a non-empty list';
  if (!Array.isArray(reader.get(params, 'tools'))) return 'responses_create_params.tools must be a list';
  if (reader.has(params, 'parallel_tool_calls') && typeof reader.get(params, 'parallel_tool_calls') !== 'boolean') {
    return 'responses_create_params.parallel_tool_calls must be a boolean';
  }
  return undefined;
}

export function checkRow<V>(row: V, options: RowCheckOptions, reader: RowReader<V>): RowCheckResult {
  if (!reader.isDict(row)) return fail('row must be an object');
  for (let i = 0; i < requiredKeys.length; i++) {
    const key = requiredKeys[i] as string;
    if (!reader.has(row, key)) return fail(`missing required key '${key}'`);
  }
  for (let i = 0; i < options.requireFields.length; i++) {
    const path = options.requireFields[i] as string;
    if (!hasFieldPath(row, path, reader)) return fail(`missing required field ${pyReprString(path)}`);
  }
  for (let i = 0; i < options.requireAnyFields.length; i++) {
    const group = options.requireAnyFields[i] as readonly string[];
    let present = group.length === 0;
    for (let k = 0; k < group.length && !present; k++) present = hasFieldPath(row, group[k] as string, reader);
    if (!present) {
      return fail(`none of required alternative fields are present: ${group.join(', ')}`);
    }
  }
  const agentError = checkAgentRef(reader.get(row, 'agent_ref'), options, reader);
  if (agentError !== undefined) return fail(agentError);
  const paramsError = checkParams(reader.get(row, 'responses_create_params'), reader);
  if (paramsError !== undefined) return fail(paramsError);
  const params = reader.get(row, 'responses_create_params') as V;
  const agentName = reader.get(reader.get(row, 'agent_ref') as V, 'name') as string;
  const input = reader.get(params, 'input') as V[];
  const tools = reader.get(params, 'tools') as V[];

  const action = reader.get(row, 'expected_action');
  if (!reader.isDict(action)) return fail('expected_action must be an object');
  const type = reader.get(action as V, 'type');
  if (type === 'message') {
    if (typeof reader.get(action as V, 'content') !== 'string')
      return fail('message expected_action.content must be a string');
    return { ok: true, summary: { agentName, actionType: 'message', inputItems: input.length, tools: tools.length } };
  }
  if (type === 'function_call_batch' && options.batchActions) {
    const calls = reader.get(action as V, 'calls');
    if (!Array.isArray(calls) || calls.length === 0) return fail('function_call_batch.calls must be a non-empty list');
    const names: string[] = [];
    for (const [i, call] of (calls as V[]).entries()) {
      if (!reader.isDict(call) || reader.get(call, 'type') !== 'function_call')
        return fail(`function_call_batch.calls[${i}] must be a function_call object`);
      const checked = checkCall(call, tools, options, reader);
      if (typeof checked !== 'string') return fail(`function_call_batch.calls[${i}]: ${checked.message}`);
      names.push(checked);
    }
    return {
      ok: true,
      summary: {
        agentName,
        actionType: 'function_call_batch',
        batchToolNames: names,
        inputItems: input.length,
        tools: tools.length,
      },
    };
  }
  if (type !== 'function_call') return fail(`unsupported expected_action type ${reader.repr(type)}`);
  const checked = checkCall(action as V, tools, options, reader);
  if (typeof checked !== 'string') return checked;
  return {
    ok: true,
    summary: {
      agentName,
      actionType: 'function_call',
      toolName: checked,
      inputItems: input.length,
      tools: tools.length,
    },
  };
}

/** The reference's function_call checks, in its order: the call's name, or the failure. */
function checkCall<V>(
  call: V,
  tools: readonly V[],
  options: RowCheckOptions,
  reader: RowReader<V>,
): string | { ok: false; message: string } {
  const name = reader.get(call, 'name');
  if (typeof name !== 'string' || name === '')
    return { ok: false, message: 'function_call is missing a non-empty name' };
  const args = reader.get(call, 'arguments');
  if (typeof args !== 'string') return { ok: false, message: 'function_call.arguments must be a JSON string' };
  const argumentsError = reader.argumentsError(args);
  if (argumentsError !== undefined)
    return { ok: false, message: `function_call.arguments is not valid JSON: ${argumentsError}` };
  if (options.checkToolNames && !offersTool(tools, name, reader)) {
    return {
      ok: false,
      message: `expected_action uses tools absent from responses_create_params.tools: [${pyReprString(name)}]`,
    };
  }
  return name;
}
