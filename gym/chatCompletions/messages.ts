import { isRecord, messageText } from '../convert/items';

// The one translation between the OpenAI Responses API and Chat Completions, used by the
// converter (chat-shaped trajectories → Responses items), the single-step executor (a pivot row →
// an engine's /v1/chat/completions and back) and the policy model server's chat route.
//
// Reasoning follows NeMo Gym 0.4.0, because a pivot re-measured by NeMo Gym must see the same
// conversation we measured (nemo_gym/responses_converter.py, ResponsesConverter; and
// responses_api_models/vllm_model/app.py, VLLMModel):
// - Responses → Chat: each reasoning summary becomes `<think>…</think>` appended, in item order,
//   to the assistant message of its turn (`_format_reasoning` into the content buffer).
// - To the engine: with `uses_reasoning_parser` (on in vllm_model.yaml) the first `<think>` block
//   moves out of the content into `reasoning_content` and `reasoning` (vLLM < / ≥ 0.16 names),
//   the content keeps the rest (`_preprocess_chat_completion_create_params`).
// - Chat → Responses: `reasoning_content`, else `reasoning`, is wrapped in `<think>` in front of
//   the content (`chat_completions`), then every `<think>` block anywhere in the content becomes
//   one summary of a single reasoning item and is cut from the text (`postprocess_assistant_message_dict`).
// A converter that only read a leading `<think>`, or that let `reasoning_content` hide the blocks
// in the content, gave the same message different reasoning depending on who read it.

type Item = Record<string, unknown>;

/** A trajectory or request that Chat Completions and Responses cannot both express. */
export class ChatConversionError extends Error {
  override name = 'ChatConversionError';
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: string;
  /** A string or null for assistant messages; other roles keep what the source sent (string or parts). */
  content: unknown;
  tool_calls?: ChatToolCall[];
  tool_call_id?: unknown;
  reasoning_content?: string;
  reasoning?: string;
}

const THINK = /<think>([\s\S]*?)<\/think>/g;

/** `_wrap_reasoning_in_think_tags`: empty texts vanish. */
function wrapThink(texts: string[]): string {
  return texts
    .filter((t) => t !== '')
    .map((t) => `<think>${t}</think>`)
    .join('');
}

/** `_parse_think_tags`: every block, wherever it sits, and the content without them. */
export function splitThink(content: string): { reasoning: string[]; text: string } {
  return { reasoning: [...content.matchAll(THINK)].map((m) => m[1] ?? ''), text: content.replace(THINK, '') };
}

const asString = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function summaryTexts(item: Item): string[] {
  return Array.isArray(item.summary) ? item.summary.map((s) => asString(isRecord(s) ? s.text : undefined)) : [];
}

/** Non-assistant content as NeMo Gym's `_format_message` sends it: strings as they are, parts as chat parts. */
function inputContent(content: unknown, where: string): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part) => {
    if (isRecord(part) && part.type === 'input_text') return { text: part.text, type: 'text' };
    if (isRecord(part) && part.type === 'input_image') {
      return { image_url: { url: part.image_url ?? '', detail: part.detail ?? 'auto' }, type: 'image_url' };
    }
    throw new ChatConversionError(
      `${where}: content part ${isRecord(part) ? String(part.type) : typeof part} has no Chat Completions form`,
    );
  });
}

function inlineToolCalls(toolCalls: unknown, where: string): ChatToolCall[] {
  if (toolCalls === undefined || toolCalls === null) return [];
  if (!Array.isArray(toolCalls)) throw new ChatConversionError(`${where}: tool_calls is not a list`);
  return toolCalls.map((call, n) => {
    if (!isRecord(call) || !isRecord(call.function) || typeof call.id !== 'string') {
      throw new ChatConversionError(`${where}: tool call ${n} needs an id and a function`);
    }
    return {
      id: call.id,
      function: { arguments: asString(call.function.arguments), name: asString(call.function.name) },
      type: 'function',
    };
  });
}

/**
 * Responses items (a request's `input`, possibly followed by a response's `output`) → Chat
 * Completions messages, their keys in the order NeMo Gym's pydantic message models dump them, so a
 * request body is byte for byte the one its vllm_model sends (see requests.ts). Consecutive reasoning, assistant text and function calls form one
 * assistant message, flushed at a function_call_output or a user/system/developer message.
 */
export function responsesItemsToChatMessages(input: string | unknown[]): ChatMessage[] {
  const items: unknown[] =
    typeof input === 'string'
      ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }]
      : input;
  const messages: ChatMessage[] = [];
  let content = '';
  let calls: ChatToolCall[] = [];
  const flush = () => {
    if (content === '' && calls.length === 0) return;
    // A turn without calls has no `tool_calls` key: OpenAI answers 400 to `tool_calls: []`. NeMo Gym
    // 0.4.0 sent the empty list; later NeMo Gym leaves it out too (NVIDIA-NeMo/Gym#2515).
    messages.push(
      calls.length > 0
        ? { role: 'assistant', content: content === '' ? null : content, tool_calls: calls }
        : { role: 'assistant', content: content === '' ? null : content },
    );
    content = '';
    calls = [];
  };
  for (const [index, item] of items.entries()) {
    const where = `input item ${index}`;
    if (!isRecord(item)) throw new ChatConversionError(`${where} is not an object`);
    const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
    if (type === 'message' && item.role === 'assistant') {
      content += messageText(item).text;
      // History written in Chat Completions shape carries its calls inline; they join the turn's
      // calls as function_call items would (NeMo Gym after NVIDIA-NeMo/Gym#2515; 0.4.0 dropped them).
      calls.push(...inlineToolCalls(item.tool_calls, where));
    } else if (type === 'message' && item.role === 'tool') {
      // A Chat Completions tool result, the function_call_output equivalent (0.4.0 refused the role).
      flush();
      messages.push({ content: item.content, role: 'tool', tool_call_id: item.tool_call_id });
    } else if (type === 'message') {
      flush();
      messages.push({ content: inputContent(item.content, where), role: asString(item.role) });
    } else if (type === 'reasoning') {
      content += wrapThink(summaryTexts(item));
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string') throw new ChatConversionError(`${where}: function_call has no call_id`);
      calls.push({
        id: item.call_id,
        function: { arguments: asString(item.arguments), name: asString(item.name) },
        type: 'function',
      });
    } else if (type === 'function_call_output') {
      flush();
      messages.push({ content: item.output, role: 'tool', tool_call_id: item.call_id });
    } else {
      throw new ChatConversionError(
        `${where} has type ${typeof type === 'string' ? type : JSON.stringify(type)}, which Chat Completions cannot express`,
      );
    }
  }
  flush();
  return messages;
}

/**
 * An assistant message as a reasoning-parser engine exchanges it: the first `<think>` block as
 * `reasoning_content` and `reasoning`, the content without blocks. Assistant content built here is
 * always a string or null, so the list form vllm_model also handles does not arise.
 */
export function withParsedReasoning(message: ChatMessage): ChatMessage {
  if (message.role !== 'assistant' || typeof message.content !== 'string') return message;
  const { reasoning, text } = splitThink(message.content);
  const first = reasoning[0];
  return first === undefined
    ? { ...message, content: text }
    : { ...message, content: text, reasoning_content: first, reasoning: first };
}

/** One model turn (Responses `output`) → the single assistant message an engine answers with. */
export function responsesOutputToChatMessage(output: unknown[]): ChatMessage {
  const turn = output.filter(
    (i) => isRecord(i) && (i.type === 'reasoning' || i.type === 'function_call' || i.role === 'assistant'),
  );
  return withParsedReasoning(responsesItemsToChatMessages(turn)[0] ?? { role: 'assistant', content: null });
}

/** Makes the id of a generated item (`rs`, `msg`, or `call<n>` for a tool call without an id). */
export type ItemIdFactory = (kind: string) => string;

/** A Chat Completions assistant message → Responses output items: reasoning, text, function calls. */
export function chatMessageToResponsesOutput(message: Item, ids?: ItemIdFactory): Item[] {
  const { text: raw, unsupportedPart } = messageText(message);
  const reasoningField = nonEmpty(message.reasoning_content) ?? nonEmpty(message.reasoning);
  const { reasoning, text } = splitThink(wrapThink(reasoningField === undefined ? [] : [reasoningField]) + raw);
  const toolCalls = message.tool_calls ?? [];
  if (!Array.isArray(toolCalls)) throw new ChatConversionError('tool_calls is not a list');
  const withId = (kind: string, item: Item): Item => (ids === undefined ? item : { id: ids(kind), ...item });

  const items: Item[] = [];
  if (reasoning.length > 0) {
    // No `status`: NeMo Gym's reasoning item has none, since OpenAI refuses it when the item is sent back.
    items.push(withId('rs', { summary: reasoning.map((r) => ({ text: r, type: 'summary_text' })), type: 'reasoning' }));
  }
  if (text !== '' || unsupportedPart !== undefined || (reasoning.length === 0 && toolCalls.length === 0)) {
    // A non-text part is kept as it came, so the converter reports it instead of losing it.
    const content = unsupportedPart !== undefined ? message.content : [{ annotations: [], text, type: 'output_text' }];
    items.push(withId('msg', { content, role: 'assistant', status: 'completed', type: 'message' }));
  }
  for (const [n, call] of toolCalls.entries()) {
    if (!isRecord(call)) throw new ChatConversionError(`tool call ${n} is not an object`);
    const fn = isRecord(call.function) ? call.function : call;
    const callId = nonEmpty(call.id) ?? ids?.(`call${n}`);
    if (callId === undefined) throw new ChatConversionError(`tool call ${n} has no id`);
    const args =
      typeof fn.arguments === 'string' || fn.arguments === undefined
        ? (fn.arguments ?? '')
        : JSON.stringify(fn.arguments);
    items.push({
      arguments: args,
      call_id: callId,
      name: fn.name,
      type: 'function_call',
      id: callId,
      status: 'completed',
    });
  }
  return items;
}

/** Chat Completions messages → Responses items; `ids` names generated items per message index. */
export function chatMessagesToResponsesItems(
  messages: unknown[],
  ids?: (messageIndex: number, kind: string) => string,
): Item[] {
  const items: Item[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || typeof message.role !== 'string')
      throw new ChatConversionError(`message ${index} has no role`);
    if (message.role === 'assistant') {
      try {
        items.push(
          ...chatMessageToResponsesOutput(message, ids === undefined ? undefined : (kind) => ids(index, kind)),
        );
      } catch (err) {
        throw err instanceof ChatConversionError ? new ChatConversionError(`message ${index}: ${err.message}`) : err;
      }
    } else if (message.role === 'tool' || message.role === 'function') {
      items.push({
        call_id: message.tool_call_id,
        output: messageText(message).text,
        type: 'function_call_output',
        status: 'completed',
      });
    } else {
      items.push({ content: messageText(message).text, role: message.role, type: 'message' });
    }
  }
  return items;
}
