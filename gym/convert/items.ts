import { createHash } from 'node:crypto';

/** A Responses API input/output item, kept open: every field a source carries must survive. */
export type Item = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Model-generated Responses item types other than function calls. They are assistant actions a
 * single-step tool verifier cannot score, so a turn holding one is rejected instead of being read
 * as a turn end.
 */
const OTHER_MODEL_ACTION_TYPES = new Set([
  'web_search_call',
  'file_search_call',
  'computer_call',
  'code_interpreter_call',
  'image_generation_call',
  'local_shell_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'custom_tool_call',
]);

export type ItemKind = 'reasoning' | 'function_call' | 'assistant_message' | 'other_model_action' | 'turn_end';

/** How the decision-point rule reads an item (fixtures/gym/README.md, "Decision points"). */
export function itemKind(item: unknown): ItemKind {
  if (!isRecord(item)) return 'turn_end';
  const type = item.type;
  if (type === 'reasoning') return 'reasoning';
  if (type === 'function_call') return 'function_call';
  if ((type === 'message' || type === undefined) && item.role === 'assistant') return 'assistant_message';
  if (typeof type === 'string' && OTHER_MODEL_ACTION_TYPES.has(type)) return 'other_model_action';
  return 'turn_end';
}

const TEXT_PART_TYPES = new Set(['output_text', 'input_text', 'text']);

/** The text of a message item, or the first content part type that is not text. */
export function messageText(item: Item): { text: string; unsupportedPart?: string } {
  const content = item.content;
  if (typeof content === 'string') return { text: content };
  if (content === null || content === undefined) return { text: '' };
  if (!Array.isArray(content)) return { text: '', unsupportedPart: typeof content };
  let text = '';
  for (const part of content) {
    if (typeof part === 'string') {
      text += part;
    } else if (isRecord(part) && TEXT_PART_TYPES.has(String(part.type)) && typeof part.text === 'string') {
      text += part.text;
    } else {
      return { text, unsupportedPart: isRecord(part) ? String(part.type) : typeof part };
    }
  }
  return { text };
}

/**
 * A copy of an item without null-valued fields, at the item level and in its content parts: rollouts
 * store unset optional fields as null (`"id": null`), which a strict Responses endpoint rejects.
 */
export function withoutNullFields(item: Item): Item {
  const out: Item = {};
  for (const [key, value] of Object.entries(item)) {
    if (value === null) continue;
    out[key] =
      key === 'content' && Array.isArray(value)
        ? value.map((part: unknown) => (isRecord(part) ? withoutNullFields(part) : part))
        : value;
  }
  return out;
}

/** A stable hex digest of several parts, for deterministic ids. */
export function digest(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('hex');
}
