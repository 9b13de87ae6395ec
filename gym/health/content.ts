// What 0.7.0's health checks count as something an agent turn or a model response said: a
// non-blank string, in a list or under one of the keys a message puts its text in.

const TEXT_KEYS = [
  'text',
  'content',
  'output_text',
  'answer',
  'refusal',
  'encrypted_content',
  'reasoning',
  'reasoning_content',
  'summary',
];

const TOOL_CALL_TYPES = new Set([
  'function_call',
  'tool_call',
  'tool_use',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'file_search_call',
  'web_search_call',
  'computer_call',
  'image_generation_call',
  'code_interpreter_call',
  'local_shell_call',
  'custom_tool_call',
]);

export const isDict = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Python's truth of a JSON value. */
export function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isDict(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

export function nonEmpty(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.some(nonEmpty);
  if (isDict(value)) return TEXT_KEYS.some((key) => nonEmpty(value[key]));
  return false;
}

export function hasToolCall(item: unknown): boolean {
  if (Array.isArray(item)) return item.some(hasToolCall);
  if (!isDict(item)) return false;
  return (typeof item.type === 'string' && TOOL_CALL_TYPES.has(item.type)) || truthy(item.tool_calls);
}

/** Whether a model's response carries any output; a message that is not an object is an error, as in 0.7.0. */
export function responseHasContent(response: unknown): boolean {
  if (!isDict(response)) return false;
  if (nonEmpty(response.output_text) || nonEmpty(response.content)) return true;
  const choices = Array.isArray(response.choices) ? response.choices : [];
  let chatContent = false;
  for (const choice of choices) {
    if (!isDict(choice)) continue;
    if (nonEmpty(choice.text)) {
      chatContent = true;
      break;
    }
    const message: unknown = truthy(choice.message) ? choice.message : {};
    if (!isDict(message)) throw new TypeError('choice message is not an object');
    if (nonEmpty(message.content)) {
      chatContent = true;
      break;
    }
  }
  return nonEmpty(response.output) || chatContent;
}
