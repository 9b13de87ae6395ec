import { isRecord } from '../convert/items';
import { dictGet, isJsonDict, toPy, type JsonDict } from '../kindedJson';
import { decodePythonJson, isPyDict, PythonJsonFailure, type PyDict, type PyValue } from '../pythonJson';
import { pyRepr } from '../validator/pythonRepr';
import {
  ChatConversionError,
  chatMessageToResponsesOutput,
  chatMessagesToResponsesItems,
  responsesItemsToChatMessages,
  responsesOutputToChatMessage,
  withParsedReasoning,
} from './messages';

// Whole requests and responses, both directions. The engine-facing direction follows NeMo Gym's
// vllm_model (responses_api_models/vllm_model/app.py, `VLLMModel.responses` and
// `_preprocess_chat_completion_create_params`), so a Chat Completions engine sees from us what
// it would see behind NeMo Gym's own model server.

type Item = Record<string, unknown>;

/**
 * The engine body's fields in the order NeMo Gym's NeMoGymChatCompletionCreateParamsNonStreaming
 * declares them: `model_dump` lists fields that way, and `orjson.dumps` of that dump is the body the
 * engine receives.
 */
const CHAT_FIELDS = [
  'messages',
  'model',
  'max_tokens',
  'metadata',
  'parallel_tool_calls',
  'service_tier',
  'store',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
] as const;
/** Responses fields that also exist in Chat Completions create params and pass through unchanged. */
const SHARED_FIELDS = new Set<string>([
  'model',
  'metadata',
  'parallel_tool_calls',
  'service_tier',
  'store',
  'temperature',
  'top_logprobs',
  'top_p',
  'user',
]);

/**
 * Fields NeMo Gym's request models type `float`. Pydantic validates an int there into a float, so
 * a row's `"temperature": 1` reaches the engine as `1.0` behind NeMo Gym; sent as `1`, an engine
 * that types its fields strictly could read a different request than NeMo Gym's users get.
 */
const FLOAT_FIELDS = new Set<string>(['temperature', 'top_p']);

/** A request field with the number kinds the row gave it (`field` of a kinded row), floats made floats. */
function requestField(kinded: JsonDict, key: string): PyValue | undefined {
  const value = dictGet(kinded, key);
  if (value === undefined || value === null) return undefined;
  const py = toPy(value);
  return FLOAT_FIELDS.has(key) && typeof py === 'bigint' ? Number(py) : py;
}

function responsesToolToChat(tool: PyValue): PyDict {
  if (!isPyDict(tool) || tool.get('type') !== 'function') {
    const type = isPyDict(tool) ? tool.get('type') : undefined;
    throw new ChatConversionError(
      `tool ${typeof type === 'string' ? type : isPyDict(tool) ? pyRepr(type) : typeof tool} has no Chat Completions form (function tools only)`,
    );
  }
  // NeMo Gym drops `type` and `strict` and keeps the rest as the function definition.
  const fn: PyDict = new Map([...tool].filter(([key, value]) => key !== 'type' && key !== 'strict' && value !== null));
  return new Map<string, PyValue>([
    ['function', fn],
    ['type', 'function'],
  ]);
}

function chatToolToResponses(tool: unknown): unknown {
  return isRecord(tool) && tool.type === 'function' && isRecord(tool.function)
    ? { type: 'function', ...tool.function }
    : tool;
}

function toolChoiceToChat(choice: unknown): unknown {
  return isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string'
    ? { type: 'function', function: { name: choice.name } }
    : choice;
}

function toolChoiceToResponses(choice: unknown): unknown {
  return isRecord(choice) && choice.type === 'function' && isRecord(choice.function)
    ? { type: 'function', name: choice.function.name }
    : choice;
}

/**
 * A `metadata` entry holding a JSON object as a string (Responses metadata values are strings),
 * decoded as NeMo Gym's `json.loads` decodes it, so a `1.0` in `extra_body` stays a float.
 */
function metadataObject(metadata: unknown, key: string): PyDict {
  const raw = isJsonDict(metadata) ? dictGet(metadata, key) : undefined;
  if (raw === undefined || raw === null) return new Map();
  const value = typeof raw === 'string' ? decodePythonJson(raw) : undefined;
  if (!isPyDict(value instanceof PythonJsonFailure ? undefined : value)) {
    throw new ChatConversionError(
      `metadata.${key} must be a JSON object encoded as a string, got ${JSON.stringify(raw)}`,
    );
  }
  return value as PyDict;
}

/** `extra | fields` as Python merges dicts: a key of both keeps its place in `extra` and the value of `fields`. */
function mergedOver(extra: PyDict, fields: Iterable<[string, PyValue]>): PyDict {
  const merged = new Map(extra);
  for (const [key, value] of fields) merged.set(key, value);
  return merged;
}

/**
 * A Responses `create` request → the body a Chat Completions engine receives (vLLM,
 * llama-server), to write with orjsonDumps. As NeMo Gym's vllm_model does: reasoning in the
 * reasoning-parser form, `max_output_tokens` as `max_tokens`, and `metadata.chat_template_kwargs` /
 * `metadata.extra_body` (JSON strings; materialization puts the per-repeat seed in `extra_body`)
 * unpacked into the body, request fields winning over `extra_body`. Numbers keep the kinds of
 * `kinded` (the row as read, which may say `1.0`). Two differences, both for engines that would
 * otherwise refuse the request: `instructions` become a leading system message (NeMo Gym's chat
 * params drop them), and `tool_choice` / `parallel_tool_calls` go when there are no tools, which
 * vLLM answers with 400.
 */
export function responsesRequestToChat(request: Item, kinded: JsonDict = request): PyDict {
  const input = request.input ?? [];
  if (typeof input !== 'string' && !Array.isArray(input))
    throw new ChatConversionError('input is neither a string nor a list of items');
  const instructions =
    typeof request.instructions === 'string' ? [{ role: 'system', content: request.instructions }] : [];
  const fields = new Map<string, PyValue>();
  fields.set('messages', toPy([...instructions, ...responsesItemsToChatMessages(input)].map(withParsedReasoning)));
  for (const key of SHARED_FIELDS) {
    const value = requestField(kinded, key);
    if (value !== undefined) fields.set(key, value);
  }
  // An int field: pydantic reads a `64.0` there as 64.
  const maxTokens = requestField(kinded, 'max_output_tokens');
  if (typeof maxTokens === 'bigint' || typeof maxTokens === 'number')
    fields.set(
      'max_tokens',
      typeof maxTokens === 'number' && Number.isSafeInteger(maxTokens) ? BigInt(maxTokens) : maxTokens,
    );
  const tools = dictGet(kinded, 'tools');
  if (Array.isArray(tools) && tools.length > 0) {
    fields.set(
      'tools',
      tools.map((tool) => responsesToolToChat(toPy(tool))),
    );
    if (request.tool_choice !== undefined && request.tool_choice !== null)
      fields.set('tool_choice', toPy(toolChoiceToChat(request.tool_choice)));
  } else {
    fields.delete('parallel_tool_calls');
  }
  const body = new Map<string, PyValue>();
  for (const key of CHAT_FIELDS) if (fields.has(key)) body.set(key, fields.get(key) as PyValue);
  const templateKwargs = metadataObject(request.metadata, 'chat_template_kwargs');
  if (templateKwargs.size > 0) body.set('chat_template_kwargs', templateKwargs);
  return mergedOver(metadataObject(request.metadata, 'extra_body'), body);
}

/**
 * A Responses request as the engine receives it, to write with orjsonDumps: the row's number kinds,
 * float fields as floats (see FLOAT_FIELDS). With `unpackExtraBody`, `metadata.extra_body` (the
 * per-repeat seed) is also spread into the top level, request fields winning: for Responses engines
 * such as llama-server that read a top-level `seed`. Opt-in, because OpenAI's Responses API rejects
 * fields it does not know.
 */
export function responsesEngineRequest(kinded: JsonDict, opts: { unpackExtraBody?: boolean } = {}): PyDict {
  const fields = new Map(toPy(kinded) as PyDict);
  for (const key of FLOAT_FIELDS) {
    const value = fields.get(key);
    if (typeof value === 'bigint') fields.set(key, Number(value));
  }
  return opts.unpackExtraBody ? mergedOver(metadataObject(fields.get('metadata'), 'extra_body'), fields) : fields;
}

/** Chat Completions create params → a Responses `create` request (the policy server's chat route). */
export function chatRequestToResponses(request: Item): Item {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const out: Item = {
    model: request.model,
    input: chatMessagesToResponsesItems(messages),
    tools: Array.isArray(request.tools) ? request.tools.map(chatToolToResponses) : undefined,
    tool_choice: toolChoiceToResponses(request.tool_choice),
    parallel_tool_calls: request.parallel_tool_calls,
    temperature: request.temperature,
    top_p: request.top_p,
    max_output_tokens: request.max_completion_tokens ?? request.max_tokens,
    seed: request.seed,
    metadata: request.metadata,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined && v !== null));
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * A chat completion → a Responses response, as `VLLMModel.responses` builds it: the first choice's
 * message as output items, usage renamed (prompt → input, completion → output, total their sum)
 * and a length / content-filter stop reported as `incomplete_details`.
 */
export function chatCompletionToResponse(completion: unknown): Item {
  const choice =
    isRecord(completion) && Array.isArray(completion.choices) ? (completion.choices as unknown[])[0] : undefined;
  if (!isRecord(completion) || !isRecord(choice) || !isRecord(choice.message))
    throw new ChatConversionError('the completion has no choices[0].message');
  const response: Item = {
    id: completion.id,
    object: 'response',
    created_at: completion.created,
    model: completion.model,
    output: chatMessageToResponsesOutput(choice.message),
  };
  const reason =
    choice.finish_reason === 'length'
      ? 'max_output_tokens'
      : choice.finish_reason === 'content_filter'
        ? 'content_filter'
        : undefined;
  if (reason !== undefined) response.incomplete_details = { reason };
  if (isRecord(completion.usage)) {
    const input = count(completion.usage.prompt_tokens);
    const output = count(completion.usage.completion_tokens);
    response.usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    };
  }
  return response;
}

/** A Responses response → the chat completion a Chat Completions engine would have answered. */
export function responseToChatCompletion(response: Item): Item {
  const message = responsesOutputToChatMessage(Array.isArray(response.output) ? response.output : []);
  const usage = isRecord(response.usage) ? response.usage : {};
  const truncated = isRecord(response.incomplete_details) && response.incomplete_details.reason === 'max_output_tokens';
  return {
    id: `chatcmpl-${String(response.id).replace(/^resp_/, '')}`,
    object: 'chat.completion',
    created: response.created_at,
    model: response.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: truncated ? 'length' : (message.tool_calls ?? []).length > 0 ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: count(usage.input_tokens),
      completion_tokens: count(usage.output_tokens),
      total_tokens: count(usage.total_tokens),
    },
    metadata: response.metadata,
  };
}
