import { z } from 'zod';
import { ChatConversionError, chatRequestToResponses, responseToChatCompletion } from '../gym/chatCompletions';
import { responsesCreateParamsSchema } from '../gym/schemas';
import { HttpError, listenJson, notFound, parseBody, requireMethod, sleep, type RunningServer } from './http';
import { SIMULATED_MODEL_NAME, SIMULATOR_LABEL, simulateResponse } from './policySimulator';

// An OpenAI-compatible model server whose "model" is the seeded policy simulator. It speaks both
// `/v1/responses` and `/v1/chat/completions`, so pointing the pipeline at vLLM or OpenAI instead is
// a URL change.

const inputItemSchema = z
  .looseObject({})
  .refine((item) => typeof item.type === 'string' || typeof item.role === 'string', {
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
  /**
   * Requests answered at once, each holding its slot for the whole latency; the rest wait in arrival
   * order, so an engine of N slots at L ms a call serves at most N/L calls a ms whatever the client's
   * concurrency, like a real engine's batch. Unset = no limit.
   */
  slots?: number;
  /** Called as each generation leaves its slot, with when it took the slot and when it left (epoch ms). */
  onServed?: (startMs: number, endMs: number) => void;
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

const epochMs = () => performance.timeOrigin + performance.now();

/** Runs `task` and reports the span it ran, or runs it alone when no one listens. */
function timed(onServed: PolicyModelOptions['onServed']): <T>(task: () => T | Promise<T>) => Promise<T> {
  if (onServed === undefined) return async (task) => task();
  return async (task) => {
    const start = epochMs();
    try {
      return await task();
    } finally {
      onServed(start, epochMs());
    }
  };
}

/** A FIFO of `slots` slots around `task`, or `task` itself when unlimited. */
function slotted(
  slots: number | undefined,
  onServed: PolicyModelOptions['onServed'],
): <T>(task: () => T | Promise<T>) => Promise<T> {
  const served = timed(onServed);
  if (slots === undefined) return served;
  let busy = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (busy < slots) busy++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await served(task);
    } finally {
      // The slot goes straight to the next waiter, so a new request cannot overtake it.
      const next = waiting.shift();
      if (next) next();
      else busy--;
    }
  };
}

export async function startPolicyModelServer(options: PolicyModelOptions): Promise<RunningServer> {
  const latency = options.latencyMs ?? 0;
  const inSlot = slotted(options.slots, options.onServed);
  const server = await listenJson({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    handler: async (request) => {
      if (request.path === '/health') return { body: { status: 'ok' } };
      if (request.path === '/v1/models') {
        requireMethod(request, 'GET');
        return {
          body: {
            object: 'list',
            data: [{ id: SIMULATED_MODEL_NAME, object: 'model', created: 0, owned_by: SIMULATOR_LABEL }],
          },
        };
      }
      if (request.path === '/v1/responses') {
        requireMethod(request, 'POST');
        const body = parseBody(responsesRequestSchema, request.body);
        return inSlot(async () => {
          if (latency > 0) await sleep(latency);
          return { body: simulateResponse(body, { seed: options.seed }) };
        });
      }
      if (request.path === '/v1/chat/completions') {
        requireMethod(request, 'POST');
        const body = parseBody(chatCompletionsRequestSchema, request.body);
        const translated = responsesRequestSchema.safeParse(readChatRequest(body));
        if (!translated.success)
          throw new HttpError(422, 'chat request cannot be read as a conversation', translated.error.issues);
        return inSlot(async () => {
          if (latency > 0) await sleep(latency);
          return { body: responseToChatCompletion(simulateResponse(translated.data, { seed: options.seed })) };
        });
      }
      return notFound(request);
    },
  });
  (options.log ?? console.error)(
    `policy model server at ${server.url} is a SIMULATED policy (${SIMULATOR_LABEL}, seed ${options.seed}), not an LLM` +
      (latency > 0 || options.slots !== undefined
        ? ` (${latency} ms a call, ${options.slots ?? 'unlimited'} slots)`
        : ''),
  );
  return server;
}
