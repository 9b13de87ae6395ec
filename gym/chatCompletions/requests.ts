import { isRecord } from '../convert/items';
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

/** Responses fields that also exist in Chat Completions create params and pass through unchanged. */
const SHARED_FIELDS = ['model', 'metadata', 'parallel_tool_calls', 'service_tier', 'store', 'temperature', 'top_logprobs', 'top_p', 'user'] as const;

function responsesToolToChat(tool: unknown): Item {
  if (!isRecord(tool) || tool.type !== 'function') {
    throw new ChatConversionError(`tool ${isRecord(tool) ? String(tool.type) : typeof tool} has no Chat Completions form (function tools only)`);
  }
  // NeMo Gym drops `type` and `strict` and keeps the rest as the function definition.
  const fn: Item = {};
  for (const [key, value] of Object.entries(tool)) if (key !== 'type' && key !== 'strict' && value !== null && value !== undefined) fn[key] = value;
  return { type: 'function', function: fn };
}

function chatToolToResponses(tool: unknown): unknown {
  return isRecord(tool) && tool.type === 'function' && isRecord(tool.function) ? { type: 'function', ...tool.function } : tool;
}

function toolChoiceToChat(choice: unknown): unknown {
  return isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string' ? { type: 'function', function: { name: choice.name } } : choice;
}

function toolChoiceToResponses(choice: unknown): unknown {
  return isRecord(choice) && choice.type === 'function' && isRecord(choice.function) ? { type: 'function', name: choice.function.name } : choice;
}

/** A `metadata` entry holding a JSON object as a string (Responses metadata values are strings). */
function metadataObject(metadata: Item, key: string): Item {
  const raw = metadata[key];
  if (raw === undefined || raw === null) return {};
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
  }
  if (!isRecord(value)) throw new ChatConversionError(`metadata.${key} must be a JSON object encoded as a string, got ${JSON.stringify(raw)}`);
  return value;
}

/**
 * A Responses `create` request → the body a Chat Completions engine receives (vLLM,
 * llama-server). As NeMo Gym's vllm_model does: reasoning in the reasoning-parser form,
 * `max_output_tokens` as `max_tokens`, and `metadata.chat_template_kwargs` / `metadata.extra_body`
 * (JSON strings; materialization puts the per-repeat seed in `extra_body`) unpacked into the
 * body, request fields winning over `extra_body`. Two differences, both for engines that would
 * otherwise refuse the request: `instructions` become a leading system message (NeMo Gym's chat
 * params drop them), and `tool_choice` / `parallel_tool_calls` go when there are no tools, which
 * vLLM answers with 400.
 */
export function responsesRequestToChat(request: Item): Item {
  const input = request.input ?? [];
  if (typeof input !== 'string' && !Array.isArray(input)) throw new ChatConversionError('input is neither a string nor a list of items');
  const instructions = typeof request.instructions === 'string' ? [{ role: 'system', content: request.instructions }] : [];
  const body: Item = { messages: [...instructions, ...responsesItemsToChatMessages(input)].map(withParsedReasoning) };
  for (const key of SHARED_FIELDS) if (request[key] !== undefined && request[key] !== null) body[key] = request[key];
  if (typeof request.max_output_tokens === 'number') body.max_tokens = request.max_output_tokens;
  const tools = Array.isArray(request.tools) ? request.tools : [];
  if (tools.length > 0) {
    body.tools = tools.map(responsesToolToChat);
    if (request.tool_choice !== undefined && request.tool_choice !== null) body.tool_choice = toolChoiceToChat(request.tool_choice);
  } else {
    delete body.parallel_tool_calls;
  }
  const metadata = isRecord(request.metadata) ? request.metadata : {};
  const templateKwargs = metadataObject(metadata, 'chat_template_kwargs');
  if (Object.keys(templateKwargs).length > 0) body.chat_template_kwargs = templateKwargs;
  return { ...metadataObject(metadata, 'extra_body'), ...body };
}

/**
 * A Responses request with `metadata.extra_body` (the per-repeat seed) also spread into its top level,
 * request fields winning: for Responses engines such as llama-server that read a top-level `seed`.
 * Opt-in, because OpenAI's Responses API rejects fields it does not know.
 */
export function withExtraBodyUnpacked(request: Item): Item {
  const metadata = isRecord(request.metadata) ? request.metadata : {};
  return { ...metadataObject(metadata, 'extra_body'), ...request };
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
  const choice = isRecord(completion) && Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  if (!isRecord(completion) || !isRecord(choice) || !isRecord(choice.message)) throw new ChatConversionError('the completion has no choices[0].message');
  const response: Item = {
    id: completion.id,
    object: 'response',
    created_at: completion.created,
    model: completion.model,
    output: chatMessageToResponsesOutput(choice.message),
  };
  const reason = choice.finish_reason === 'length' ? 'max_output_tokens' : choice.finish_reason === 'content_filter' ? 'content_filter' : undefined;
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
    choices: [{ index: 0, message, finish_reason: truncated ? 'length' : (message.tool_calls ?? []).length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: count(usage.input_tokens), completion_tokens: count(usage.output_tokens), total_tokens: count(usage.total_tokens) },
    metadata: response.metadata,
  };
}
