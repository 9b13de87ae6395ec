import { z } from 'zod';
import { chatMessagesToItems } from './chatCompletions';
import { turnsToChatMessages } from './conversational';
import { isRecord } from './items';
import { toResponsesTools } from './tools';
import { type RowConversion, indexField, rejectRow, rewardField } from './trajectory';

/** Where a generic row keeps its message list and tool list (dotted paths, e.g. `trace.steps`). */
export const fieldMappingSchema = z.object({
  messages: z.string().min(1),
  tools: z.string().min(1).optional(),
  reward: z.string().min(1).default('reward'),
  task_index: z.string().min(1).optional(),
  rollout_index: z.string().min(1).optional(),
});
export type FieldMapping = z.infer<typeof fieldMappingSchema>;

export function readPath(row: Record<string, unknown>, dotted: string): unknown {
  let value: unknown = row;
  for (const key of dotted.split('.')) {
    if (!isRecord(value)) return undefined;
    value = value[key];
  }
  return value;
}

/** Does the row hold a message list where the mapping says? */
export function looksLikeToolMessages(row: Record<string, unknown>, mapping: FieldMapping): boolean {
  return Array.isArray(readPath(row, mapping.messages));
}

/**
 * Reads a generic row through a field mapping. The messages may be Chat Completions messages or
 * speaker turns; the tools either tool form.
 */
export function fromToolMessagesRow(
  row: Record<string, unknown>,
  mapping: FieldMapping,
  idSeed: string,
): RowConversion {
  const list = readPath(row, mapping.messages);
  if (!Array.isArray(list)) return rejectRow(`field ${mapping.messages} is not a list`);
  const messages = turnsToChatMessages(list);
  if (typeof messages === 'string') return rejectRow(`${mapping.messages}: ${messages}`);
  const items = chatMessagesToItems(messages, idSeed);
  if (typeof items === 'string') return rejectRow(`${mapping.messages}: ${items}`);
  const tools = toResponsesTools(mapping.tools === undefined ? undefined : readPath(row, mapping.tools));
  if (tools.error) return rejectRow(`${mapping.tools}: ${tools.error}`);
  return {
    ok: true,
    trajectory: {
      prefix: [],
      output: items,
      tools: tools.tools,
      reward: rewardField(readPath(row, mapping.reward)),
      taskIndex: mapping.task_index === undefined ? undefined : indexField(readPath(row, mapping.task_index)),
      rolloutIndex: mapping.rollout_index === undefined ? undefined : indexField(readPath(row, mapping.rollout_index)),
    },
  };
}
