// Pure translation between the OpenAI Responses API and Chat Completions, for engines that only
// speak Chat Completions. Consecutive assistant items (reasoning, text, function calls) form one
// assistant message, as NeMo Gym's converter groups them: the buffer is flushed at a
// `function_call_output` or at any non-assistant message, so one decision point is one message.

type Item = Record<string, unknown>;

/** Where reasoning goes in Chat Completions: vLLM's `reasoning_content`, or NeMo Gym's `<think>…</think>` content prefix. */
export type ReasoningFormat = 'reasoning_content' | 'think_tags';

export interface ChatConversionOptions {
  reasoning?: ReasoningFormat;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p === 'object' && p !== null && typeof (p as Item).text === 'string' ? ((p as Item).text as string) : '')).join('');
}

function reasoningText(item: Item): string {
  const summary = item.summary;
  if (!Array.isArray(summary)) return '';
  return summary.map((p) => str((p as Item).text)).join('\n\n');
}

const itemType = (item: Item): string => (typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : 'unknown');

const isAssistantItem = (item: Item): boolean => {
  const type = itemType(item);
  return type === 'reasoning' || type === 'function_call' || (type === 'message' && item.role === 'assistant');
};

function assistantMessage(buffer: Item[], reasoning: ReasoningFormat): ChatMessage {
  const thoughts = buffer.filter((i) => itemType(i) === 'reasoning').map(reasoningText);
  const texts = buffer.filter((i) => itemType(i) === 'message').map((i) => textOf(i.content));
  const calls = buffer.filter((i) => itemType(i) === 'function_call');
  const thought = thoughts.join('\n\n');
  const text = texts.join('');
  const message: ChatMessage = { role: 'assistant', content: null };
  if (reasoning === 'think_tags') {
    const content = (thoughts.length > 0 ? `<think>${thought}</think>` : '') + text;
    message.content = thoughts.length > 0 || texts.length > 0 ? content : null;
  } else {
    message.content = texts.length > 0 ? text : null;
  }
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({ id: str(c.call_id), type: 'function', function: { name: str(c.name), arguments: str(c.arguments) } }));
  }
  if (reasoning === 'reasoning_content' && thoughts.length > 0) message.reasoning_content = thought;
  return message;
}

/** Responses `input` (or `input` + `output`) items → Chat Completions messages. */
export function responsesItemsToChatMessages(input: string | Item[], options: ChatConversionOptions = {}): ChatMessage[] {
  const reasoning = options.reasoning ?? 'reasoning_content';
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: ChatMessage[] = [];
  let buffer: Item[] = [];
  const flush = () => {
    if (buffer.length > 0) messages.push(assistantMessage(buffer, reasoning));
    buffer = [];
  };
  for (const item of input) {
    if (isAssistantItem(item)) {
      buffer.push(item);
      continue;
    }
    flush();
    const type = itemType(item);
    if (type === 'function_call_output') messages.push({ role: 'tool', content: str(item.output), tool_call_id: str(item.call_id) });
    else if (type === 'message') messages.push({ role: str(item.role), content: textOf(item.content) });
  }
  flush();
  return messages;
}

/** One model turn (Responses `output`) → the single assistant message a Chat Completions engine returns. */
export function responsesOutputToChatMessage(output: Item[], options: ChatConversionOptions = {}): ChatMessage {
  return assistantMessage(output.filter(isAssistantItem), options.reasoning ?? 'reasoning_content');
}

const THINK_PREFIX = /^\s*<think>([\s\S]*?)<\/think>/;

function splitThink(content: string): { thought?: string; text: string } {
  const m = content.match(THINK_PREFIX);
  return m ? { thought: m[1], text: content.slice(m[0].length) } : { text: content };
}

export interface ResponsesOutputOptions {
  /** Stable suffix for generated item ids (`rs_…`, `msg_…`), so a translation is reproducible. */
  idSuffix?: string;
}

/**
 * A Chat Completions assistant message → Responses output items, in the order a reasoning model
 * emits them: reasoning, text, then function calls. `<think>` content is read as reasoning too.
 */
export function chatMessageToResponsesOutput(message: Item, options: ResponsesOutputOptions = {}): Item[] {
  const suffix = options.idSuffix;
  const withId = (prefix: string, item: Item): Item => (suffix === undefined ? item : { id: `${prefix}_${suffix}`, ...item });
  const raw = typeof message.content === 'string' ? message.content : message.content === null || message.content === undefined ? undefined : textOf(message.content);
  const split: { thought?: string; text?: string } = raw === undefined ? {} : splitThink(raw);
  const thought = typeof message.reasoning_content === 'string' ? message.reasoning_content : typeof message.reasoning === 'string' ? message.reasoning : split.thought;
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Item[]) : [];
  const items: Item[] = [];
  if (thought !== undefined) items.push(withId('rs', { type: 'reasoning', summary: [{ type: 'summary_text', text: thought }] }));
  const text = split.text;
  // An empty content string only stands for a message when the turn has nothing else in it.
  if (text !== undefined && (text !== '' || (calls.length === 0 && thought === undefined))) {
    items.push(withId('msg', { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }));
  }
  for (const call of calls) {
    const fn = (call.function ?? {}) as Item;
    items.push({ type: 'function_call', id: str(call.id), call_id: str(call.id), name: str(fn.name), arguments: str(fn.arguments), status: 'completed' });
  }
  return items;
}

/** Chat Completions messages → Responses `input` items. */
export function chatMessagesToResponsesItems(messages: Item[]): Item[] {
  return messages.flatMap((m): Item[] => {
    const role = str(m.role);
    if (role === 'assistant') return chatMessageToResponsesOutput(m);
    if (role === 'tool') return [{ type: 'function_call_output', call_id: str(m.tool_call_id), output: textOf(m.content) }];
    return [{ type: 'message', role, content: textOf(m.content) }];
  });
}

function chatToolToResponses(tool: Item): Item {
  if (tool.type !== 'function' || typeof tool.function !== 'object' || tool.function === null) return tool;
  return { type: 'function', ...(tool.function as Item) };
}

function responsesToolToChat(tool: Item): Item {
  if (tool.type !== 'function') return tool;
  const fn: Item = {};
  for (const key of ['name', 'description', 'parameters', 'strict']) if (tool[key] !== undefined && tool[key] !== null) fn[key] = tool[key];
  return { type: 'function', function: fn };
}

function toolChoiceToChat(choice: unknown): unknown {
  if (typeof choice === 'object' && choice !== null && (choice as Item).type === 'function' && typeof (choice as Item).name === 'string') {
    return { type: 'function', function: { name: (choice as Item).name } };
  }
  return choice;
}

function toolChoiceToResponses(choice: unknown): unknown {
  if (typeof choice === 'object' && choice !== null && (choice as Item).type === 'function' && typeof (choice as Item).function === 'object') {
    return { type: 'function', name: ((choice as Item).function as Item).name };
  }
  return choice;
}

const defined = (o: Item): Item => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/** A Responses `create` request → Chat Completions create params. `instructions` become a leading system message. */
export function responsesRequestToChat(request: Item, options: ChatConversionOptions = {}): Item {
  const input = (request.input ?? []) as string | Item[];
  const instructions = typeof request.instructions === 'string' ? [{ role: 'system', content: request.instructions }] : [];
  return defined({
    model: request.model,
    messages: [...instructions, ...responsesItemsToChatMessages(input, options)],
    tools: Array.isArray(request.tools) && request.tools.length > 0 ? (request.tools as Item[]).map(responsesToolToChat) : undefined,
    tool_choice: toolChoiceToChat(request.tool_choice),
    parallel_tool_calls: request.parallel_tool_calls,
    temperature: request.temperature,
    top_p: request.top_p,
    max_tokens: request.max_output_tokens,
    seed: request.seed,
    metadata: request.metadata,
  });
}

/** Chat Completions create params → a Responses `create` request. */
export function chatRequestToResponses(request: Item): Item {
  const messages = Array.isArray(request.messages) ? (request.messages as Item[]) : [];
  return defined({
    model: request.model,
    input: chatMessagesToResponsesItems(messages),
    tools: Array.isArray(request.tools) ? (request.tools as Item[]).map(chatToolToResponses) : undefined,
    tool_choice: toolChoiceToResponses(request.tool_choice),
    parallel_tool_calls: request.parallel_tool_calls,
    temperature: request.temperature,
    top_p: request.top_p,
    max_output_tokens: request.max_completion_tokens ?? request.max_tokens,
    seed: request.seed,
    metadata: request.metadata,
  });
}
