import { ChatConversionError, chatMessagesToResponsesItems } from '../chatCompletions';
import { type Item, digest, isRecord } from './items';
import { toResponsesTools } from './tools';
import { type RowConversion, indexField, rejectRow, rewardField } from './trajectory';

/** Does this row look like a Chat Completions trajectory (`messages` with roles)? */
export function looksLikeChatCompletions(row: Record<string, unknown>): boolean {
  return (
    Array.isArray(row.messages) &&
    row.messages.length > 0 &&
    row.messages.every((m) => isRecord(m) && typeof m.role === 'string')
  );
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
 * Chat Completions messages as Responses items, through the shared conversion (gym/chatCompletions),
 * so a trajectory reads the same here as in the executor and the policy server. Generated ids
 * (reasoning, message, and tool calls that came without one) derive from `idSeed`, so reruns give
 * identical items; a message the conversion cannot read is reported, not thrown.
 */
export function chatMessagesToItems(messages: unknown[], idSeed: string): Item[] | string {
  try {
    return chatMessagesToResponsesItems(
      messages,
      (index, kind) => `${kind}_${digest(idSeed, String(index), kind).slice(0, 32)}`,
    );
  } catch (err) {
    if (err instanceof ChatConversionError) return err.message;
    throw err;
  }
}
