import type { ResponsesCreateParams } from '../gym/schemas';
import { toolCallMatches } from './toolEnvironment';
import { nextAction, parseUserPrompt, type CompletedCall } from './travelTasks';
import { baseSkill, decide, Draws, skillAt, type Decision } from './policyChoices';
import { canonicalJson } from '../gym/pivotIdentity';

// A seeded "oracle with noise" standing in for an LLM policy (no weights can be downloaded here).
// It reads the conversation, works out the correct next action in the travel environment, and takes
// it with a skill probability that depends on the decision point; otherwise it makes a plausible
// mistake. Every draw is a hash of (simulator seed, request seed, normalised input), so the same
// request always gets the same bytes back and a pivot re-sampled with seeds 0..K-1 sees K draws.

export const SIMULATED_MODEL_NAME = 'pivot-miner-simulated-policy';
export const SIMULATOR_LABEL = 'pivot-miner seeded policy simulator';
// Responses need a creation time; a constant keeps outputs byte-identical across runs.
const SIMULATED_CREATED_AT = 1767225600;

export interface SimulatorOptions {
  seed: number;
}

type Item = Record<string, unknown>;

type ConversationItem =
  | { kind: 'message'; role: string; text: string }
  | { kind: 'function_call'; name: string; arguments: string; call_id: string }
  | { kind: 'function_call_output'; call_id: string; output: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'other'; type: string };

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      typeof part === 'object' && part !== null && typeof (part as Item).text === 'string'
        ? ((part as Item).text as string)
        : '',
    )
    .join('');
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

// Only what a model conditions on is kept (no item ids, statuses or token ids), so the same
// conversation arriving through /v1/responses or /v1/chat/completions gets the same draws.
export function normaliseInput(input: ResponsesCreateParams['input']): ConversationItem[] {
  if (typeof input === 'string') return [{ kind: 'message', role: 'user', text: input }];
  return input.map((raw): ConversationItem => {
    const item = raw as Item;
    const type = typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : 'unknown';
    if (type === 'message') return { kind: 'message', role: str(item.role), text: contentText(item.content) };
    if (type === 'function_call')
      return {
        kind: 'function_call',
        name: str(item.name),
        arguments: str(item.arguments),
        call_id: str(item.call_id),
      };
    if (type === 'function_call_output')
      return { kind: 'function_call_output', call_id: str(item.call_id), output: str(item.output) };
    if (type === 'reasoning') return { kind: 'reasoning', text: contentText(item.summary) };
    return { kind: 'other', type };
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The per-request seed: `metadata.extra_body` (NeMo Gym's JSON string `{"seed": i}`) or a top-level `seed`. */
export function requestSeed(request: ResponsesCreateParams): number | undefined {
  const metadata = request.metadata;
  if (typeof metadata === 'object' && metadata !== null) {
    const extra = (metadata as Item).extra_body;
    const body = typeof extra === 'string' ? parseJson(extra) : extra;
    if (typeof body === 'object' && body !== null && typeof (body as Item).seed === 'number')
      return (body as Item).seed as number;
  }
  return typeof request.seed === 'number' ? request.seed : undefined;
}

/** Training step encoded in the model name (`sim-policy@step-2`), so a caller can simulate an improving policy. */
export function trainingStep(model: unknown): number {
  const m = typeof model === 'string' ? model.match(/@step-(\d+)$/) : null;
  return m ? Number(m[1]) : 0;
}

function completedCalls(items: ConversationItem[]): CompletedCall[] {
  const outputs = new Map<string, string>();
  for (const item of items) if (item.kind === 'function_call_output') outputs.set(item.call_id, item.output);
  return items.flatMap((item) =>
    item.kind === 'function_call' && outputs.has(item.call_id)
      ? [
          {
            name: item.name,
            arguments: parseJson(item.arguments),
            output: parseJson(outputs.get(item.call_id) as string),
          },
        ]
      : [],
  );
}

// Request options that shape sampling (tool_choice, parallel_tool_calls, temperature, ...) join the
// draw key. A pivot row re-asks a trajectory's prefix with `tool_choice: "auto"` and
// `parallel_tool_calls: false`, so its samples are fresh draws, as they would be from a real model,
// rather than a replay of the very sample that produced the trajectory.
const NOT_SAMPLING_OPTIONS = new Set(['input', 'metadata', 'seed', 'model', 'tools', 'stream', 'store', 'user']);

function samplingOptions(request: ResponsesCreateParams): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(request).filter(([k, v]) => !NOT_SAMPLING_OPTIONS.has(k) && v !== null && v !== undefined),
  );
}

const approxTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/** What the policy does next: a travel task's next step (taken or fumbled), or a polite refusal. */
function decideNext(items: ConversationItem[], step: number, draws: Draws): Decision {
  const lastUser = [...items]
    .reverse()
    .find((i): i is Extract<ConversationItem, { kind: 'message' }> => i.kind === 'message' && i.role === 'user');
  const task = lastUser ? parseUserPrompt(lastUser.text) : undefined;
  if (!task)
    return {
      type: 'message',
      text: 'I can help with weather, temperatures and flight prices. Please ask about one of those.',
      why: 'This is not a travel question.',
    };
  const action = nextAction(task, completedCalls(items), (expected, actual) => toolCallMatches(expected, actual));
  return decide(task, action, skillAt(baseSkill(task, action), step), draws);
}

/** The decision as Responses output items: its reasoning summary, then the call or message. */
function outputItems(decision: Decision, draws: Draws): Record<string, unknown>[] {
  const reasoning = {
    type: 'reasoning',
    id: draws.id('rs', 'reasoning'),
    summary: [{ type: 'summary_text', text: decision.why }],
    status: 'completed',
  };
  const action =
    decision.type === 'call'
      ? {
          type: 'function_call',
          id: draws.id('fc', 'item'),
          call_id: draws.id('call', 'call'),
          name: decision.call.name,
          arguments: JSON.stringify(decision.call.arguments),
          status: 'completed',
        }
      : {
          type: 'message',
          id: draws.id('msg', 'item'),
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: decision.text, annotations: [] }],
        };
  return [reasoning, action];
}

/** One Responses-API response for a Responses `create` request. Pure: same request + seed ⇒ same bytes. */
export function simulateResponse(request: ResponsesCreateParams, options: SimulatorOptions): Record<string, unknown> {
  const items = normaliseInput(request.input);
  const seed = requestSeed(request);
  const inputKey = canonicalJson(items);
  const draws = new Draws(
    `${options.seed}\u0000${seed ?? 'none'}\u0000${inputKey}\u0000${canonicalJson(samplingOptions(request))}`,
  );
  const step = trainingStep(request.model);
  const decision = decideNext(items, step, draws);
  const output = outputItems(decision, draws);
  const outputTokens = approxTokens(JSON.stringify(output));
  const reasoningTokens = approxTokens(decision.why);
  const inputTokens = approxTokens(inputKey);
  return {
    id: draws.id('resp', 'response'),
    object: 'response',
    created_at: SIMULATED_CREATED_AT,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: step > 0 ? `${SIMULATED_MODEL_NAME}@step-${step}` : SIMULATED_MODEL_NAME,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? false,
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: inputTokens + outputTokens,
    },
    metadata: { simulator: SIMULATOR_LABEL },
  };
}
