import { type Item, digest, isRecord, messageText } from './items';
import { toResponsesTools } from './tools';
import { type RowConversion, indexField, rejectRow, rewardField } from './trajectory';

/** Does this row look like a Chat Completions trajectory (`messages` with roles)? */
export function looksLikeChatCompletions(row: Record<string, unknown>): boolean {
  return Array.isArray(row.messages) && row.messages.length > 0 && row.messages.every((m) => isRecord(m) && typeof m.role === 'string');
}

/** Reads a Chat Completions trajectory row: `messages`, `tools`, `reward`. */
export function fromChatCompletionsRow(row: Record<string, unknown>, idSeed: string): RowConversion {
  if (!Array.isArray(row.messages)) return rejectRow('messages is not a list');
  const items = chatMessagesToItems(row.messages, idSeed);
  if (typeof items === 'string') return rejectRow(items);
  const tools = toResponsesTools(row.tools);
  if (tools.error) return rejectRow(`tools: ${tools.error}`);
  return {
    ok: true,
    trajectory: {
      prefix: [],
      output: items,
      tools: tools.tools,
      reward: rewardField(row.reward),
      taskIndex: indexField(row._ng_task_index) ?? indexField(row.task_idx),
      rolloutIndex: indexField(row._ng_rollout_index),
    },
  };
}

/**
 * Chat Completions messages as Responses items, following NeMo Gym's converter: an assistant
 * message becomes its reasoning (from `reasoning_content`, or `<think>` blocks in the content),
 * then its text as an output message (only when there is text, or nothing else at all), then one
 * `function_call` per tool call whose id is the call id; a tool message becomes a
 * `function_call_output`. Generated ids derive from `idSeed`, so reruns give identical items.
 */
export function chatMessagesToItems(messages: unknown[], idSeed: string): Item[] | string {
  const items: Item[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || typeof message.role !== 'string') return `message ${index} has no role`;
    const id = (prefix: string) => `${prefix}_${digest(idSeed, String(index), prefix).slice(0, 32)}`;
    if (message.role === 'assistant') {
      const converted = assistantItems(message, id);
      if (typeof converted === 'string') return `message ${index}: ${converted}`;
      items.push(...converted);
    } else if (message.role === 'tool' || message.role === 'function') {
      const output = messageText(message);
      items.push({ call_id: message.tool_call_id, output: output.text, type: 'function_call_output', status: 'completed' });
    } else {
      items.push({ content: messageText(message).text, role: message.role, type: 'message' });
    }
  }
  return items;
}

function assistantItems(message: Record<string, unknown>, id: (prefix: string) => string): Item[] | string {
  const { text, unsupportedPart } = messageText(message);
  const thinking = splitThinkTags(text);
  const reasoning = [
    ...(typeof message.reasoning_content === 'string' && message.reasoning_content !== '' ? [message.reasoning_content] : []),
    ...(typeof message.reasoning === 'string' && message.reasoning !== '' ? [message.reasoning] : []),
    ...thinking.reasoning,
  ];
  const toolCalls = message.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) return 'tool_calls is not a list';

  const items: Item[] = [];
  if (reasoning.length > 0) {
    items.push({ id: id('rs'), summary: reasoning.map((r) => ({ text: r, type: 'summary_text' })), type: 'reasoning' });
  }
  if (thinking.content !== '' || unsupportedPart !== undefined || (items.length === 0 && toolCalls.length === 0)) {
    // A non-text part is kept as it came so the decision point reports it instead of losing it.
    const content = unsupportedPart !== undefined ? message.content : [{ annotations: [], text: thinking.content, type: 'output_text' }];
    items.push({ id: id('msg'), content, role: 'assistant', status: 'completed', type: 'message' });
  }
  for (const [n, call] of toolCalls.entries()) {
    if (!isRecord(call)) return `tool call ${n} is not an object`;
    const fn = isRecord(call.function) ? call.function : call;
    const callId = typeof call.id === 'string' && call.id !== '' ? call.id : id(`call${n}`);
    const args = typeof fn.arguments === 'string' || fn.arguments === undefined ? fn.arguments : JSON.stringify(fn.arguments);
    items.push({ arguments: args ?? '', call_id: callId, name: fn.name, type: 'function_call', id: callId, status: 'completed' });
  }
  return items;
}

/** `<think>…</think>` blocks, NeMo Gym's way of carrying reasoning in chat content. */
function splitThinkTags(text: string): { reasoning: string[]; content: string } {
  const reasoning: string[] = [];
  const content = text.replace(/<think>([\s\S]*?)<\/think>/g, (_match, inner: string) => {
    reasoning.push(inner);
    return '';
  });
  return { reasoning, content };
}
