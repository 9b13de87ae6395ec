import type { ExpectedAction } from '../schemas';
import { type Item, itemKind, messageText } from './items';

/** An assistant turn: a maximal run of assistant items between two turn ends. */
export interface Turn {
  /** Index of the turn's first item (action or reasoning). */
  start: number;
  /** Index after its last item. */
  end: number;
  actions: number[];
  reasoning: number[];
}

/**
 * The assistant turns of `items` (fixtures/gym/README.md, "Decision points"): reasoning belongs to
 * the turn it sits in wherever it sits, a function_call_output or any non-assistant item ends a
 * turn. Turns with at least one action are decision points; reasoning-only turns are returned too
 * (they shape the input prefix) and told apart by an empty `actions`.
 */
export function assistantTurns(items: Item[]): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  for (const [index, item] of items.entries()) {
    const kind = itemKind(item);
    if (kind === 'turn_end') {
      current = undefined;
      continue;
    }
    if (current === undefined) {
      current = { start: index, end: index + 1, actions: [], reasoning: [] };
      turns.push(current);
    }
    current.end = index + 1;
    (kind === 'reasoning' ? current.reasoning : current.actions).push(index);
  }
  return turns;
}

export const SKIP_REASONS = [
  'parallel_tool_calls',
  'invalid_arguments_json',
  'tool_not_in_schema',
  'unsupported_item_type',
  'empty_action',
  'unmatched_call_id',
  'empty_input',
  'malformed_trajectory',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export type ActionReading = { ok: true; action: ExpectedAction } | { ok: false; reason: SkipReason; detail: string };

function skip(reason: SkipReason, detail: string): ActionReading {
  return { ok: false, reason, detail };
}

/**
 * The expected action of a decision point, as NeMo Gym's single-step verifier reads a turn: one
 * function call (any text beside it is not part of the action), or text alone as a message.
 */
export function readAction(items: Item[], turn: Turn, toolNames: Set<string>, batchPivots: boolean): ActionReading {
  const calls: Item[] = [];
  let text = '';
  for (const index of turn.actions) {
    const item = items[index];
    const kind = itemKind(item);
    if (kind === 'other_model_action')
      return skip('unsupported_item_type', `item ${index} has type ${String(item.type)}`);
    if (kind === 'function_call') {
      calls.push(item);
      continue;
    }
    const message = messageText(item);
    if (message.unsupportedPart !== undefined) {
      return skip(
        'unsupported_item_type',
        `assistant message ${index} holds a ${message.unsupportedPart} content part`,
      );
    }
    text += message.text;
  }

  if (calls.length === 0) {
    if (text.trim() === '') return skip('empty_action', 'the turn has neither a tool call nor text');
    return { ok: true, action: { type: 'message', content: text } };
  }
  if (calls.length > 1 && !batchPivots) return skip('parallel_tool_calls', `the turn makes ${calls.length} tool calls`);

  const read: { type: 'function_call'; name: string; arguments: string }[] = [];
  for (const call of calls) {
    const name = call.name;
    if (typeof name !== 'string' || name === '') return skip('empty_action', 'a function_call has no name');
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? null);
    try {
      JSON.parse(args);
    } catch (err) {
      return skip(
        'invalid_arguments_json',
        `arguments of ${name} are not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!toolNames.has(name)) return skip('tool_not_in_schema', `tool ${name} is not in the tool list`);
    read.push({ type: 'function_call', name, arguments: args });
  }
  if (read.length === 1) return { ok: true, action: read[0] };
  return { ok: true, action: { type: 'function_call_batch', calls: read } };
}

/** The first call_id problem of an input prefix: an output with no earlier call, or a call never answered. */
export function callIdMismatch(input: Item[]): string | undefined {
  const open = new Set<unknown>();
  for (const item of input) {
    if (item.type === 'function_call') open.add(item.call_id);
    if (item.type === 'function_call_output') {
      if (!open.has(item.call_id))
        return `function_call_output ${JSON.stringify(item.call_id ?? null)} answers no earlier function_call`;
      open.delete(item.call_id);
    }
  }
  const [unanswered] = open;
  return open.size > 0
    ? `function_call ${JSON.stringify(unanswered ?? null)} has no function_call_output before the pivot`
    : undefined;
}
