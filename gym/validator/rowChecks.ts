// The per-row checks of NeMo Gym's validate_pivot_dataset.py, in its order and with its wording.
// A row is checked as Python decoded it, so types follow Python (`isinstance(x, dict)` is a Map).
import { isPyDict, loadsPythonJson, PythonJsonDecodeError, type PyDict, type PyValue } from '../pythonJson';
import { pyRepr, pyReprString } from './pythonRepr';

export interface RowCheckOptions {
  agentRef?: string;
  requireFields: readonly string[];
  /** Groups already split and trimmed; empty groups are ignored. */
  requireAnyFields: readonly (readonly string[])[];
  checkToolNames: boolean;
  /** Extra agent check run right after the reference's agent_ref checks; returns a message on failure. */
  checkAgentName?: (name: string) => string | undefined;
}

/** What a valid row contributes to the metrics block. */
export interface RowSummary {
  agentName: string;
  actionType: 'function_call' | 'message';
  /** The function_call name; absent for message rows. */
  toolName?: string;
  inputItems: number;
  tools: number;
}

export type RowCheckResult = { ok: true; summary: RowSummary } | { ok: false; message: string };

const requiredKeys = ['responses_create_params', 'expected_action', 'agent_ref'] as const;

function fail(message: string): RowCheckResult {
  return { ok: false, message };
}

/** A dotted path is present when every step is an own key of an object and the end is not null. */
export function hasFieldPath(row: PyDict, path: string): boolean {
  let current: PyValue | undefined = row;
  for (const segment of path.split('.')) {
    if (!isPyDict(current) || !current.has(segment)) return false;
    current = current.get(segment);
  }
  return current !== null;
}

/** Tool names a `tools` list offers: an entry's own string `name` wins even when empty (and then
 * hides `function.name`); empty names are dropped at the end. */
export function toolNames(tools: readonly PyValue[]): Set<string> {
  const names = new Set<string>();
  for (const tool of tools) {
    if (!isPyDict(tool)) continue;
    const own = tool.get('name');
    if (typeof own === 'string') {
      if (own !== '') names.add(own);
      continue;
    }
    const fn = tool.get('function');
    const nested = isPyDict(fn) ? fn.get('name') : undefined;
    if (typeof nested === 'string' && nested !== '') names.add(nested);
  }
  return names;
}

function checkAgentRef(agentRef: PyValue | undefined, options: RowCheckOptions): string | undefined {
  if (!isPyDict(agentRef)) return 'agent_ref must be an object';
  if (agentRef.get('type') !== 'responses_api_agents') return 'agent_ref.type must be responses_api_agents';
  const name = agentRef.get('name');
  if (typeof name !== 'string' || name === '') return 'agent_ref.name must be a non-empty string';
  if (options.agentRef !== undefined && name !== options.agentRef) {
    return `agent_ref.name ${pyReprString(name)} does not match expected ${pyReprString(options.agentRef)}`;
  }
  return options.checkAgentName?.(name);
}

function checkParams(params: PyValue | undefined): string | undefined {
  if (!isPyDict(params)) return 'responses_create_params must be an object';
  if (params.has('metadata') && params.get('metadata') === null) {
    return 'responses_create_params.metadata must be omitted or non-null';
  }
  if (params.has('tool_choice') && params.get('tool_choice') !== 'auto') {
    return `responses_create_params.tool_choice should be 'auto', found ${pyRepr(params.get('tool_choice'))}`;
  }
  const input = params.get('input');
  if (!Array.isArray(input) || input.length === 0) return 'responses_create_params.input must be a non-empty list';
  if (!Array.isArray(params.get('tools'))) return 'responses_create_params.tools must be a list';
  if (params.has('parallel_tool_calls') && typeof params.get('parallel_tool_calls') !== 'boolean') {
    return 'responses_create_params.parallel_tool_calls must be a boolean';
  }
  return undefined;
}

export function checkRow(row: PyValue, options: RowCheckOptions): RowCheckResult {
  if (!isPyDict(row)) return fail('row must be an object');
  for (const key of requiredKeys) if (!row.has(key)) return fail(`missing required key '${key}'`);
  for (const path of options.requireFields) {
    if (!hasFieldPath(row, path)) return fail(`missing required field ${pyReprString(path)}`);
  }
  for (const group of options.requireAnyFields) {
    if (group.length > 0 && !group.some((path) => hasFieldPath(row, path))) {
      return fail(`none of required alternative fields are present: ${group.join(', ')}`);
    }
  }
  const agentError = checkAgentRef(row.get('agent_ref'), options);
  if (agentError !== undefined) return fail(agentError);
  const paramsError = checkParams(row.get('responses_create_params'));
  if (paramsError !== undefined) return fail(paramsError);
  const params = row.get('responses_create_params') as PyDict;
  const agentName = (row.get('agent_ref') as PyDict).get('name') as string;
  const input = params.get('input') as PyValue[];
  const tools = params.get('tools') as PyValue[];
  const counts = { agentName, inputItems: input.length, tools: tools.length };

  const action = row.get('expected_action');
  if (!isPyDict(action)) return fail('expected_action must be an object');
  const type = action.get('type');
  if (type === 'message') {
    if (typeof action.get('content') !== 'string') return fail('message expected_action.content must be a string');
    return { ok: true, summary: { ...counts, actionType: 'message' } };
  }
  if (type !== 'function_call') return fail(`unsupported expected_action type ${pyRepr(type)}`);
  const name = action.get('name');
  if (typeof name !== 'string' || name === '') return fail('function_call is missing a non-empty name');
  const args = action.get('arguments');
  if (typeof args !== 'string') return fail('function_call.arguments must be a JSON string');
  try {
    loadsPythonJson(args);
  } catch (error) {
    if (!(error instanceof PythonJsonDecodeError)) throw error;
    return fail(`function_call.arguments is not valid JSON: ${error.message}`);
  }
  if (options.checkToolNames && !toolNames(tools).has(name)) {
    return fail(`expected_action uses tools absent from responses_create_params.tools: [${pyReprString(name)}]`);
  }
  return { ok: true, summary: { ...counts, actionType: 'function_call', toolName: name } };
}
