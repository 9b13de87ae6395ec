import { type Item, isRecord } from './items';

/**
 * Tool definitions in the Responses form (`{type: "function", name, description, parameters,
 * strict}`). Chat Completions nests the function (`{type: "function", function: {...}}`); both are
 * accepted, and a JSON-string tool list (seen in exported traces) is parsed.
 */
export function toResponsesTools(tools: unknown): { tools: Item[]; error?: string } {
  let list = tools;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return { tools: [], error: 'the tool list is a string that is not valid JSON' };
    }
  }
  if (list === null || list === undefined) return { tools: [] };
  if (!Array.isArray(list)) return { tools: [], error: `the tool list is not a list (saw ${typeof list})` };
  const out: Item[] = [];
  for (const tool of list) {
    if (!isRecord(tool)) return { tools: [], error: 'a tool definition is not an object' };
    out.push(isRecord(tool.function) && tool.name === undefined ? flattenChatTool(tool.function) : tool);
  }
  return { tools: out };
}

function flattenChatTool(fn: Record<string, unknown>): Item {
  const tool: Item = { type: 'function', name: fn.name };
  for (const key of ['description', 'parameters', 'strict'] as const) {
    if (fn[key] !== undefined && fn[key] !== null) tool[key] = fn[key];
  }
  return tool;
}

/** Names a function call may use: the `name` of each function tool. */
export function functionToolNames(tools: Item[]): Set<string> {
  const names = new Set<string>();
  for (const tool of tools) {
    if ((tool.type === 'function' || tool.type === undefined) && typeof tool.name === 'string' && tool.name !== '')
      names.add(tool.name);
  }
  return names;
}
