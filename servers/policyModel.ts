import { z } from 'zod';
import { ChatConversionError, chatRequestToResponses, responseToChatCompletion } from '../gym/chatCompletions';
import { responsesCreateParamsSchema } from '../gym/schemas';
import { HttpError, listenJson, notFound, parseBody, requireMethod, sleep, type RunningServer } from './http';
import { SIMULATED_MODEL_NAME, SIMULATOR_LABEL, simulateResponse } from './policySimulator';

// An OpenAI-compatible model server whose "model" is the seeded policy simulator. It speaks both
// `/v1/responses` and `/v1/chat/completions`, so pointing the pipeline at vLLM or OpenAI instead is
// a URL change.

const inputItemSchema = z.looseObject({}).refine((item) => typeof item.type === 'string' || typeof item.role === 'string', {
  message: 'each input item needs a `type` or a `role`',
});

const samplingFields = {
  model: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  seed: z.number().int().nullish(),
  stream: z.literal(false, { message: 'streaming is not supported by the simulator' }).nullish(),
};

export const responsesRequestSchema = responsesCreateParamsSchema.extend({
  input: z.union([z.string(), z.array(inputItemSchema)]),
  ...samplingFields,
});

export const chatCompletionsRequestSchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.string() })).min(1),
  tools: z.array(z.looseObject({})).nullish(),
  n: z.literal(1, { message: 'the simulator returns one choice (n = 1)' }).nullish(),
  ...samplingFields,
});

export interface PolicyModelOptions {
  seed: number;
  host?: string;
  port?: number;
  /** Added delay per request, to make the simulator behave more like a remote engine in benchmarks. */
  latencyMs?: number;
  log?: (line: string) => void;
}

function readChatRequest(body: Record<string, unknown>): Record<string, unknown> {
  try {
    return chatRequestToResponses(body);
  } catch (err) {
    if (err instanceof ChatConversionError) throw new HttpError(422, err.message);
    throw err;
  }
}

export async function startPolicyModelServer(options: PolicyModelOptions): Promise<RunningServer> {
  const latency = options.latencyMs ?? 0;
  const server = await listenJson({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    handler: async (request) => {
      if (request.path === '/health') return { body: { status: 'ok' } };
      if (request.path === '/v1/models') {
        requireMethod(request, 'GET');
        return { body: { object: 'list', data: [{ id: SIMULATED_MODEL_NAME, object: 'model', created: 0, owned_by: SIMULATOR_LABEL }] } };
      }
      if (request.path === '/v1/responses') {
        requireMethod(request, 'POST');
        const body = parseBody(responsesRequestSchema, request.body);
        if (latency > 0) await sleep(latency);
        return { body: simulateResponse(body, { seed: options.seed }) };
      }
      if (request.path === '/v1/chat/completions') {
        requireMethod(request, 'POST');
        const body = parseBody(chatCompletionsRequestSchema, request.body);
        const translated = responsesRequestSchema.safeParse(readChatRequest(body));
        if (!translated.success) throw new HttpError(422, 'chat request cannot be read as a conversation', translated.error.issues);
        if (latency > 0) await sleep(latency);
        return { body: responseToChatCompletion(simulateResponse(translated.data, { seed: options.seed })) };
      }
      return notFound(request);
    },
  });
  (options.log ?? console.error)(
    `policy model server at ${server.url} is a SIMULATED policy (${SIMULATOR_LABEL}, seed ${options.seed}), not an LLM`,
  );
  return server;
}

