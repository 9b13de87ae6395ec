import { createHash } from 'node:crypto';
import type { ResponsesCreateParams } from '../gym/schemas';
import { toolCallMatches, type ToolName } from './toolEnvironment';
import {
  nextAction,
  parseUserPrompt,
  wrongFinalAnswerText,
  type CompletedCall,
  type NextAction,
  type PlannedCall,
  type TravelTask,
} from './travelTasks';
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

// Per decision point skill of the untrained policy. Famous landmarks, Fahrenheit and euros are easy;
// obscure landmarks, Kelvin and yen are hard; Kelvin final answers are always rounded wrongly, so
// Kelvin tasks never succeed until training raises that skill.
const LANDMARK_SKILL: Record<string, number> = {
  'Brandenburg Gate': 0.55,
  'Sagrada Familia': 0.55,
  Atomium: 0.12,
  'Little Mermaid': 0.12,
};
const TEMPERATURE_SKILL: Record<string, number> = { F: 0.9, K: 0.3 };
const CURRENCY_SKILL: Record<string, number> = { GBP: 0.6, JPY: 0.08 };
const FLIGHT_PRICE_SKILL = 0.8;

function baseSkill(task: TravelTask, action: NextAction): number {
  if (action.type === 'answer') return 'unit' in task && task.unit === 'K' ? 0 : 1;
  const args = action.call.arguments;
  switch (action.call.name) {
    case 'find_city_by_landmark':
      return LANDMARK_SKILL[String(args.landmark)] ?? 1;
    case 'get_weather':
      return 1;
    case 'convert_temperature':
      return TEMPERATURE_SKILL[String(args.to_unit)] ?? 1;
    case 'get_flight_price':
      return FLIGHT_PRICE_SKILL;
    case 'convert_currency':
      return CURRENCY_SKILL[String(args.to_currency).toUpperCase()] ?? 1;
  }
}

/** Each training step removes 40% of the remaining error rate at every decision point. */
export function skillAt(base: number, step: number): number {
  return 1 - (1 - base) * 0.6 ** step;
}

class Draws {
  constructor(private readonly key: string) {}

  digest(label: string): Buffer {
    return createHash('sha256').update(`${this.key}\u0000${label}`).digest();
  }

  uniform(label: string): number {
    return this.digest(label).readUIntBE(0, 6) / 2 ** 48;
  }

  pick(label: string, n: number): number {
    return this.digest(label).readUInt32BE(8) % n;
  }

  id(prefix: string, label: string): string {
    return `${prefix}_${this.digest(label).toString('hex').slice(0, 24)}`;
  }
}

type Decision = { type: 'call'; call: PlannedCall; why: string } | { type: 'message'; text: string; why: string };

const WRONG_CURRENCY_CODES: Record<string, string> = { EUR: 'EURO', GBP: 'POUND', JPY: 'YEN', USD: 'DOLLAR' };

function wrongArguments(call: PlannedCall, pick: number): PlannedCall {
  const a = call.arguments;
  switch (call.name) {
    case 'find_city_by_landmark':
      return {
        name: call.name,
        arguments: { landmark: pick % 2 === 0 ? `${String(a.landmark)} Monument` : `Old ${String(a.landmark)}` },
      };
    case 'get_weather': {
      const city = String(a.city);
      return {
        name: call.name,
        arguments: { city: pick % 2 === 0 ? city.slice(0, -1) : city === 'London' ? 'Londres' : 'London' },
      };
    }
    case 'convert_temperature':
      return pick % 2 === 0
        ? { name: call.name, arguments: { value: a.value, from_unit: a.to_unit, to_unit: 'C' } }
        : { name: call.name, arguments: { value: a.value, from_unit: 'F', to_unit: a.to_unit } };
    case 'get_flight_price':
      return { name: call.name, arguments: { origin: a.destination, destination: a.origin } };
    case 'convert_currency': {
      const to = String(a.to_currency).toUpperCase();
      return pick % 2 === 0
        ? {
            name: call.name,
            arguments: { amount: a.amount, from_currency: 'USD', to_currency: WRONG_CURRENCY_CODES[to] ?? `${to}X` },
          }
        : { name: call.name, arguments: { amount: a.amount, from_currency: a.to_currency, to_currency: 'USD' } };
    }
  }
}

function wrongTool(call: PlannedCall): PlannedCall {
  const a = call.arguments;
  const swaps: Record<ToolName, () => PlannedCall> = {
    find_city_by_landmark: () => ({ name: 'get_weather', arguments: { city: a.landmark } }),
    get_weather: () => ({ name: 'find_city_by_landmark', arguments: { landmark: a.city } }),
    convert_temperature: () => ({
      name: 'convert_currency',
      arguments: { amount: a.value, from_currency: 'C', to_currency: a.to_unit },
    }),
    get_flight_price: () => ({ name: 'get_weather', arguments: { city: a.destination } }),
    convert_currency: () => ({
      name: 'convert_temperature',
      arguments: { value: a.amount, from_unit: 'C', to_unit: 'F' },
    }),
  };
  return swaps[call.name]();
}

const GIVE_UP_TEXTS = [
  'I am sorry, I could not find that information with the tools I have.',
  'I was not able to complete the lookup. Please check a travel site for the latest details.',
];

function decide(task: TravelTask, action: NextAction, skill: number, draws: Draws): Decision {
  const correct = draws.uniform('correct') < skill;
  if (action.type === 'answer') {
    return correct
      ? { type: 'message', text: action.answer.text, why: 'I have everything I need, so I can answer now.' }
      : {
          type: 'message',
          text: wrongFinalAnswerText(task, action.facts, draws.pick('variant', 1000)),
          why: 'I have enough to answer.',
        };
  }
  const call = action.call;
  if (correct) return { type: 'call', call, why: `Next I need ${call.name} with ${JSON.stringify(call.arguments)}.` };
  const mistake = draws.uniform('mistake');
  if (mistake < 0.55) {
    const wrong = wrongArguments(call, draws.pick('variant', 1000));
    return { type: 'call', call: wrong, why: `Next I need ${wrong.name} with ${JSON.stringify(wrong.arguments)}.` };
  }
  if (mistake < 0.75) {
    const wrong = wrongTool(call);
    return { type: 'call', call: wrong, why: `I will try ${wrong.name} first.` };
  }
  return {
    type: 'message',
    text: GIVE_UP_TEXTS[draws.pick('variant', GIVE_UP_TEXTS.length)],
    why: 'The tools do not seem to give me this.',
  };
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

/** One Responses-API response for a Responses `create` request. Pure: same request + seed ⇒ same bytes. */
export function simulateResponse(request: ResponsesCreateParams, options: SimulatorOptions): Record<string, unknown> {
  const items = normaliseInput(request.input);
  const seed = requestSeed(request);
  const inputKey = canonicalJson(items);
  const draws = new Draws(
    `${options.seed}\u0000${seed ?? 'none'}\u0000${inputKey}\u0000${canonicalJson(samplingOptions(request))}`,
  );
  const lastUser = [...items]
    .reverse()
    .find((i): i is Extract<ConversationItem, { kind: 'message' }> => i.kind === 'message' && i.role === 'user');
  const task = lastUser ? parseUserPrompt(lastUser.text) : undefined;
  const step = trainingStep(request.model);

  const decision: Decision = task
    ? (() => {
        const action = nextAction(task, completedCalls(items), (expected, actual) => toolCallMatches(expected, actual));
        return decide(task, action, skillAt(baseSkill(task, action), step), draws);
      })()
    : {
        type: 'message',
        text: 'I can help with weather, temperatures and flight prices. Please ask about one of those.',
        why: 'This is not a travel question.',
      };

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
  const output = [reasoning, action];
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
