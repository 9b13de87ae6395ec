import { chatMessagesToItems } from './chatCompletions';
import { isRecord } from './items';
import { toResponsesTools } from './tools';
import { type RowConversion, indexField, rejectRow, rewardField } from './trajectory';

const TURN_LIST_KEYS = ['conversations', 'conversation', 'turns'] as const;

/** Provenance fields a conversational trace may carry about itself; copied into each candidate. */
const TRACE_PROVENANCE_KEYS = ['id', 'uuid', 'source', 'provenance', 'metadata', 'license', 'used_in'] as const;

const SPEAKER_ROLES: Record<string, string> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  assistant: 'assistant',
  model: 'assistant',
  bot: 'assistant',
  system: 'system',
  developer: 'developer',
  function_call: 'function_call',
  tool_call: 'function_call',
  observation: 'tool',
  tool: 'tool',
  function: 'tool',
  ipython: 'tool',
};

/** Does this row look like a conversational trace (a list of speaker turns)? */
export function looksLikeConversational(row: Record<string, unknown>): boolean {
  const turns = turnList(row);
  return turns !== undefined && turns.length > 0 && turns.every((t) => isRecord(t) && speakerOf(t) !== undefined);
}

function turnList(row: Record<string, unknown>): unknown[] | undefined {
  for (const key of TURN_LIST_KEYS) if (Array.isArray(row[key])) return row[key] as unknown[];
  return undefined;
}

function speakerOf(turn: Record<string, unknown>): string | undefined {
  const speaker = turn.role ?? turn.from ?? turn.speaker;
  return typeof speaker === 'string' ? speaker : undefined;
}

/**
 * Reads a conversational trace: speaker turns (`from`/`role`, `value`/`content`) with per-turn
 * reasoning (`reasoning`, `reasoning_content` or `thinking`), tool calls either inline
 * (`tool_calls`) or as their own `function_call` turns, tool results as `observation`/`tool` turns,
 * and the trace's own provenance fields.
 */
export function fromConversationalRow(row: Record<string, unknown>, idSeed: string): RowConversion {
  const turns = turnList(row);
  if (turns === undefined) return rejectRow(`none of ${TURN_LIST_KEYS.join(', ')} is a list`);
  const messages = turnsToChatMessages(turns);
  if (typeof messages === 'string') return rejectRow(messages);
  const items = chatMessagesToItems(messages, idSeed);
  if (typeof items === 'string') return rejectRow(items);
  const tools = toResponsesTools(row.tools ?? row.functions);
  if (tools.error) return rejectRow(`tools: ${tools.error}`);

  const sourceTrace: Record<string, unknown> = {};
  for (const key of TRACE_PROVENANCE_KEYS) if (row[key] !== undefined && row[key] !== null) sourceTrace[key] = row[key];
  return {
    ok: true,
    trajectory: {
      prefix: [],
      output: items,
      tools: tools.tools,
      reward: rewardField(row.reward ?? row.score),
      taskIndex: indexField(row._ng_task_index) ?? indexField(row.task_idx),
      rolloutIndex: indexField(row._ng_rollout_index),
      sourceTrace: Object.keys(sourceTrace).length > 0 ? sourceTrace : undefined,
    },
  };
}

/**
 * Speaker turns as Chat Completions messages. A `function_call` turn joins the assistant message
 * right before it (the same model turn), and a tool result without an id answers the oldest call
 * still waiting for one.
 */
export function turnsToChatMessages(turns: unknown[]): Record<string, unknown>[] | string {
  const messages: Record<string, unknown>[] = [];
  const pendingCallIds: string[] = [];
  let callCount = 0;
  for (const [index, turn] of turns.entries()) {
    if (!isRecord(turn)) return `turn ${index} is not an object`;
    const speaker = speakerOf(turn);
    if (speaker === undefined) return `turn ${index} names no speaker (role, from or speaker)`;
    const role = SPEAKER_ROLES[speaker.toLowerCase()] ?? speaker;
    const content = turn.content ?? turn.value ?? turn.text ?? null;

    if (role === 'function_call') {
      const call = parseCallTurn(content);
      if (typeof call === 'string') return `turn ${index}: ${call}`;
      const id = typeof turn.id === 'string' ? turn.id : `call_${callCount}`;
      callCount += 1;
      pendingCallIds.push(id);
      const toolCall = { id, type: 'function', function: call };
      const last = messages[messages.length - 1];
      if (last !== undefined && last.role === 'assistant') {
        last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), toolCall];
      } else {
        messages.push({ role: 'assistant', content: null, tool_calls: [toolCall] });
      }
      continue;
    }

    const message: Record<string, unknown> = { role, content };
    if (role === 'assistant') {
      const reasoning = turn.reasoning_content ?? turn.reasoning ?? turn.thinking;
      if (typeof reasoning === 'string') message.reasoning_content = reasoning;
      if (Array.isArray(turn.tool_calls)) {
        message.tool_calls = turn.tool_calls.map((call: unknown) => {
          if (!isRecord(call)) return call;
          const id = typeof call.id === 'string' ? call.id : `call_${callCount}`;
          callCount += 1;
          pendingCallIds.push(id);
          return { ...call, id };
        });
      }
    } else if (role === 'tool') {
      const answered = typeof turn.tool_call_id === 'string' ? turn.tool_call_id : pendingCallIds[0];
      const pending = pendingCallIds.indexOf(answered ?? '');
      if (pending >= 0) pendingCallIds.splice(pending, 1);
      message.tool_call_id = answered;
    }
    messages.push(message);
  }
  return messages;
}

function parseCallTurn(content: unknown): Record<string, unknown> | string {
  let call = content;
  if (typeof call === 'string') {
    try {
      call = JSON.parse(call);
    } catch {
      return 'a function_call turn whose value is not JSON';
    }
  }
  if (!isRecord(call) || typeof call.name !== 'string') return 'a function_call turn without a tool name';
  const args = call.arguments ?? call.parameters ?? {};
  return { name: call.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}
