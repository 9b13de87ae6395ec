import { fetch } from 'undici';
import { z } from 'zod';
import { aggregateMetricsRequestSchema } from '../gym/aggregateMetrics';
import { aggregateMetrics070Schema } from '../gym/aggregateMetrics070';
import { responsesCreateParamsSchema, taskRowSchema } from '../gym/schemas';
import { HttpError, listenJson, notFound, parseBody, requireMethod, type RunningServer } from './http';

// A NeMo Gym `simple_agent`-style agent: call the model, run each function call against the
// resources server, feed the outputs back, repeat until the model answers without a call or the
// step budget runs out, then ask the resources server to verify the whole trajectory.

export const DEFAULT_MAX_STEPS = 10;

/** An `/aggregate_metrics` request carries every rollout of a run, far beyond a `/run` body. */
export const AGGREGATE_METRICS_BODY_LIMIT_BYTES = 512 * 1024 * 1024;

export interface AgentServerOptions {
  modelUrl: string;
  resourcesUrl: string;
  host?: string;
  port?: number;
  /** Model calls per rollout before the agent stops (NeMo Gym's `max_steps`). */
  maxSteps?: number;
  requestTimeoutMs?: number;
}

const modelResponseSchema = z.looseObject({
  output: z.array(z.looseObject({})),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
});
type ModelResponse = z.infer<typeof modelResponseSchema>;

/** Cookies set by one upstream server, sent back on later calls of the same rollout (NeMo Gym sessions ride on cookies). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  store(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
}

interface Upstream {
  url: string;
  jar: CookieJar;
  label: string;
}

/** A body already written as JSON, relayed as it is so its numbers keep their kinds. */
class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Relays with the undici package's fetch, not Node 20's own: that one reuses a pooled socket until 1 s
 * before the server's advertised keep-alive timeout, on a timer with 1 s resolution, so a socket idle for
 * about 5 s can be closed by a Node server just as a request goes out on it ("other side closed").
 */
async function post(
  upstream: Upstream,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  let res: Response;
  try {
    res = await fetch(new URL(path, upstream.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...upstream.jar.header() },
      body: body instanceof JsonText ? body.text : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new HttpError(
      502,
      `${upstream.label} at ${upstream.url} is unreachable for POST ${path}: ${(err as Error).message}`,
    );
  }
  upstream.jar.store(res.headers);
  return { status: res.status, text: await res.text() };
}

async function postForJson(upstream: Upstream, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
  return (await postForJsonText(upstream, path, body, timeoutMs)).value;
}

async function postForJsonText(
  upstream: Upstream,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ value: unknown; text: string }> {
  const { status, text } = await post(upstream, path, body, timeoutMs);
  if (status < 200 || status >= 300)
    throw new HttpError(502, `${upstream.label} answered POST ${path} with HTTP ${status}: ${text.slice(0, 500)}`);
  try {
    return { value: JSON.parse(text), text };
  } catch {
    throw new HttpError(
      502,
      `${upstream.label} answered POST ${path} with a body that is not JSON: ${text.slice(0, 200)}`,
    );
  }
}

function parseArguments(text: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(String(text)) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

interface RolloutContext {
  model: Upstream;
  resources: Upstream;
  maxSteps: number;
  timeoutMs: number;
}

/** The agent's own `/v1/responses`: the multi-step loop; the returned response's `output` is every item generated. */
async function respond(
  params: Record<string, unknown> & { input: string | Record<string, unknown>[] },
  ctx: RolloutContext,
): Promise<ModelResponse> {
  const input = typeof params.input === 'string' ? [{ role: 'user', content: params.input }] : params.input;
  const generated: Record<string, unknown>[] = [];
  let last: ModelResponse | undefined;
  for (let step = 1; ; step++) {
    const raw = await postForJson(
      ctx.model,
      '/v1/responses',
      { ...params, input: [...input, ...generated] },
      ctx.timeoutMs,
    );
    const parsed = modelResponseSchema.safeParse(raw);
    if (!parsed.success)
      throw new HttpError(
        502,
        `model server returned an invalid Responses object: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    last = parsed.data;
    generated.push(...last.output);
    if (last.incomplete_details?.reason === 'max_output_tokens') break;

    const calls = last.output.filter((item) => item.type === 'function_call');
    for (const call of calls) {
      const args = parseArguments(call.arguments);
      // A malformed call is the policy's mistake, not an infrastructure failure: the model sees the error.
      const output = args.ok
        ? (await post(ctx.resources, `/${encodeURIComponent(String(call.name))}`, args.value, ctx.timeoutMs)).text
        : JSON.stringify({ error: `arguments are not valid JSON: ${args.error}` });
      generated.push({ type: 'function_call_output', call_id: call.call_id, output });
    }
    const answered = last.output.some((item) => item.type === 'message' && item.role === 'assistant');
    if ((calls.length === 0 && answered) || step >= ctx.maxSteps) break;
  }
  return { ...last, output: generated };
}

const runRequestSchema = taskRowSchema;

async function run(row: z.infer<typeof runRequestSchema>, ctx: RolloutContext): Promise<unknown> {
  await postForJson(ctx.resources, '/seed_session', row, ctx.timeoutMs);
  const response = await respond(row.responses_create_params, ctx);
  return postForJson(ctx.resources, '/verify', { ...row, response }, ctx.timeoutMs);
}

export async function startAgentServer(options: AgentServerOptions): Promise<RunningServer> {
  const base = {
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    timeoutMs: options.requestTimeoutMs ?? 120_000,
  };
  // A fresh cookie jar per rollout keeps concurrent rollouts' sessions apart.
  const context = (): RolloutContext => ({
    ...base,
    model: { url: options.modelUrl, jar: new CookieJar(), label: 'model server' },
    resources: { url: options.resourcesUrl, jar: new CookieJar(), label: 'resources server' },
  });
  return listenJson({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    bodyLimitBytes: AGGREGATE_METRICS_BODY_LIMIT_BYTES,
    handler: async (request) => {
      if (request.path === '/health') return { body: { status: 'ok' } };
      if (request.path === '/run') {
        requireMethod(request, 'POST');
        return { body: await run(parseBody(runRequestSchema, request.body), context()) };
      }
      if (request.path === '/aggregate_metrics') {
        // Proxied to the resources server, which owns the metrics, as NeMo Gym's simple_agent does
        // (responses_api_agents/simple_agent/app.py SimpleAgent.aggregate_metrics).
        // Relayed as text both ways, so the numbers keep the kinds the collection writes back.
        requireMethod(request, 'POST');
        parseBody(aggregateMetricsRequestSchema, request.body);
        const { resources, timeoutMs } = context();
        const answer = await postForJsonText(resources, '/aggregate_metrics', new JsonText(request.text), timeoutMs);
        const metrics = aggregateMetrics070Schema.safeParse(answer.value);
        if (!metrics.success)
          throw new HttpError(
            502,
            `resources server answered /aggregate_metrics with something that is not AggregateMetrics: ${metrics.error.issues[0]?.message}`,
          );
        return { text: answer.text };
      }
      if (request.path === '/v1/responses') {
        requireMethod(request, 'POST');
        return { body: await respond(parseBody(responsesCreateParamsSchema, request.body), context()) };
      }
      return notFound(request);
    },
  });
}
