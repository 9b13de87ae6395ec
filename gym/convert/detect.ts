import { fromChatCompletionsRow, looksLikeChatCompletions } from './chatCompletions';
import { fromConversationalRow, looksLikeConversational } from './conversational';
import { fromGymRolloutRow, looksLikeGymRollout } from './gymRollouts';
import { isRecord } from './items';
import { describeValue } from './lineReader';
import { ConvertInputError } from '../errors';
import { type FieldMapping, fromToolMessagesRow, looksLikeToolMessages } from './toolMessages';
import type { RowConversion, SourceFormat } from './trajectory';

const SHAPES =
  'gym_rollouts (responses_create_params + response.output), chat_completions (messages with roles), ' +
  'conversational (conversations of speaker turns) or tool_messages (a message list named by field_mapping)';

/**
 * The source format of a file, decided on its first row. A format is per file because one export
 * holds one shape; a later row that does not fit is rejected on its own.
 */
export function detectSourceFormat(
  row: Record<string, unknown>,
  file: string,
  line: number,
  fieldMapping?: FieldMapping,
): SourceFormat {
  if (looksLikeGymRollout(row)) return 'gym_rollouts';
  if (fieldMapping !== undefined && looksLikeToolMessages(row, fieldMapping)) return 'tool_messages';
  if (looksLikeChatCompletions(row)) return 'chat_completions';
  if (looksLikeConversational(row)) return 'conversational';
  const hint =
    isRecord(row.responses_create_params) && row.response === undefined
      ? '; this looks like a task row, not a rollout (conversion needs the collected rollouts)'
      : '';
  throw new ConvertInputError(
    file,
    line,
    `no source format fits this row: saw ${describeValue(row)}${hint}; expected ${SHAPES}, or set source_format`,
  );
}

/** Whether a row has the shape of a given format (used to check a format the user forced). */
export function fitsFormat(format: SourceFormat, row: Record<string, unknown>, fieldMapping?: FieldMapping): boolean {
  switch (format) {
    case 'gym_rollouts':
      return looksLikeGymRollout(row);
    case 'chat_completions':
      return looksLikeChatCompletions(row);
    case 'conversational':
      return looksLikeConversational(row);
    case 'tool_messages':
      return fieldMapping !== undefined && looksLikeToolMessages(row, fieldMapping);
  }
}

export function convertRow(
  format: SourceFormat,
  row: Record<string, unknown>,
  idSeed: string,
  fieldMapping?: FieldMapping,
): RowConversion {
  switch (format) {
    case 'gym_rollouts':
      return fromGymRolloutRow(row);
    case 'chat_completions':
      return fromChatCompletionsRow(row, idSeed);
    case 'conversational':
      return fromConversationalRow(row, idSeed);
    case 'tool_messages':
      if (fieldMapping === undefined)
        throw new Error('source_format tool_messages needs field_mapping (at least its messages path)');
      return fromToolMessagesRow(row, fieldMapping, idSeed);
  }
}
