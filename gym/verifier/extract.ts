import { z } from 'zod';
import type { ExpectedAction } from '../schemas';

const contentPartSchema = z.looseObject({ type: z.string() });

/**
 * One Responses-API output item, open like the API itself. Only the fields the verifier reads are
 * required, and only on the item types it reads them from.
 */
export const responseOutputItemSchema = z.looseObject({ type: z.string() }).superRefine((item, ctx) => {
  if (item.type === 'function_call') {
    for (const key of ['name', 'arguments'] as const) {
      if (typeof item[key] !== 'string') {
        ctx.addIssue({ code: 'custom', path: [key], message: `a function_call item needs a string "${key}"` });
      }
    }
  } else if (item.type === 'message') {
    if (!z.array(contentPartSchema).safeParse(item.content).success) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'a message item needs a "content" list of typed parts',
      });
    }
  }
});

/** The part of a Responses-API response object the verifier reads. */
export const verifierResponseSchema = z.looseObject({ output: z.array(responseOutputItemSchema) });
export type VerifierResponse = z.infer<typeof verifierResponseSchema>;

type FunctionCallAction = Extract<ExpectedAction, { type: 'function_call' }>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `String(value)` without its call for the usual string (a builtin call V8 does not inline). */
function asString(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

function firstOutputText(item: Record<string, unknown>): string | undefined {
  if (item.role !== 'assistant' || !Array.isArray(item.content)) return undefined;
  for (const part of item.content) {
    if (isRecord(part) && part.type === 'output_text') return typeof part.text === 'string' ? part.text : '';
  }
  return undefined;
}

/**
 * The action a response took, as NeMo Gym's `extract_action` derives it: every `function_call`
 * item counts whatever its status or position, and tool calls win over text. The text is the first
 * `output_text` of the first assistant message that has one. Null when there is neither.
 */
export function extractAction(output: readonly unknown[]): ExpectedAction | null {
  // The common single call is returned without collecting a list.
  let firstCall: FunctionCallAction | undefined;
  let calls: FunctionCallAction[] | undefined;
  let text: string | undefined;
  for (let index = 0; index < output.length; index++) {
    const item = output[index];
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      const call: FunctionCallAction = {
        type: 'function_call',
        name: asString(item.name),
        arguments: asString(item.arguments),
      };
      if (firstCall === undefined) firstCall = call;
      else (calls ??= [firstCall]).push(call);
    } else if (item.type === 'message' && text === undefined) {
      text = firstOutputText(item);
    }
  }
  if (calls) return { type: 'function_call_batch', calls };
  if (firstCall) return firstCall;
  return text === undefined ? null : { type: 'message', content: text };
}
