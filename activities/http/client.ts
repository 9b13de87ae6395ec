import { setMaxListeners } from 'node:events';
import { Readable } from 'node:stream';
import { Agent, errors, request } from 'undici';
import { inFlightCount } from './inFlight';
import { RequestStop } from './requestStop';

// Every call to a model, agent or resources server goes through here, so failures are classified
// once: the class decides retry (429/5xx/timeouts/connection) vs. give up (other 4xx, garbage), and
// is what lands in the `*_failures.jsonl` sidecar.

export type FailureClass =
  | 'http_429'
  | 'http_5xx'
  | 'http_4xx'
  | 'timeout'
  | 'connection'
  | 'invalid_response'
  | 'agent_reported'
  | 'judge_invalid'
  | 'cancelled';

/** What a server answered with an error status: NeMo Gym 0.7.0's failure rows record it. */
export interface ErrorAnswer {
  url: string;
  status: number;
  body: string;
}

export class RequestFailure extends Error {
  constructor(
    readonly failureClass: FailureClass,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    readonly answered?: ErrorAnswer,
  ) {
    super(message);
    this.name = 'RequestFailure';
  }
}

/** One keep-alive pool per origin and worker; `connections` caps what a single worker sends to one server. */
const pools = new Map<string, Agent>();

export function poolFor(url: string, connections: number): Agent {
  const origin = new URL(url).origin;
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Agent({ connections, pipelining: 1, keepAliveTimeout: 30_000 });
    pools.set(origin, pool);
  }
  return pool;
}

/** Closes every keep-alive pool; a worker calls this on shutdown so no socket outlives it. */
export async function closePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close().catch(() => undefined)));
}

export interface PostOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  connections?: number;
  /** Reads a 200 body instead of JSON.parse; what it throws classifies the body as not JSON. */
  parse?: (text: string) => unknown;
}

function retryAfterMs(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function classifyError(err: unknown, url: string, signal?: AbortSignal): RequestFailure {
  if (signal?.aborted) return new RequestFailure('cancelled', `request to ${url} cancelled`, false);
  if (
    err instanceof errors.HeadersTimeoutError ||
    err instanceof errors.BodyTimeoutError ||
    err instanceof errors.ConnectTimeoutError ||
    (err instanceof Error && err.name === 'TimeoutError')
  ) {
    return new RequestFailure('timeout', `request to ${url} timed out`, true);
  }
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  return new RequestFailure('connection', `request to ${url} failed: ${code ?? String(err)}`, true);
}

/** POSTs JSON and returns the parsed JSON body; throws a classified RequestFailure otherwise. */
export async function postJson(url: string, body: unknown, opts: PostOptions): Promise<unknown> {
  return postJsonText(url, JSON.stringify(body), opts);
}

/**
 * postJson for a body already serialized, or streamed piece by piece when it is too large to hold
 * twice in memory (an `/aggregate_metrics` request carries every rollout of a run).
 */
export async function postJsonText(
  url: string,
  body: string | (() => AsyncIterable<string>),
  opts: PostOptions,
): Promise<unknown> {
  // One stop per request, unlinked from the activity's signal when the request settles:
  // AbortSignal.any on a chunk-long signal keeps every request's signal alive until the chunk ends.
  const stop = new RequestStop();
  const timer = setTimeout(
    () => stop.stop(new DOMException(`request to ${url} timed out`, 'TimeoutError')),
    opts.timeoutMs,
  );
  const onAbort = () => stop.stop(opts.signal?.reason);
  if (opts.signal?.aborted) onAbort();
  else if (opts.signal) {
    // Every request in flight holds one listener until it settles; that many is expected, not a leak.
    setMaxListeners(0, opts.signal);
    opts.signal.addEventListener('abort', onAbort, { once: true });
  }
  const inFlight = inFlightCount(url);
  if (inFlight) inFlight.count++;
  try {
    return await postJsonOnce(url, body, opts, stop);
  } finally {
    if (inFlight) inFlight.count--;
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

const RETRY_AFTER = 'retry-after';

/**
 * Collects one answer from undici's lowest-level interface, a dispatch handler: `request()` would
 * wrap each answer in a Readable and an AsyncResource that a body read whole at once does not need,
 * and those cost a worker more per rollout than parsing the HTTP itself. Aborting (a timeout or the
 * activity's cancellation) fails the answer with the abort's reason, as `request()` does.
 */
function dispatchPost(
  pool: Agent,
  url: URL,
  body: string | Readable,
  headers: Record<string, string>,
  timeoutMs: number,
  stop: RequestStop,
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let status = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    pool.dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        body,
        headers,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      {
        onConnect(abortRequest: (reason?: Error) => void) {
          stop.connected(abortRequest);
        },
        onHeaders(statusCode: number, rawHeaders: Buffer[]) {
          status = statusCode;
          for (let i = 0; i < rawHeaders.length; i += 2) {
            if (
              rawHeaders[i]!.length === RETRY_AFTER.length &&
              rawHeaders[i]!.toString('latin1').toLowerCase() === RETRY_AFTER
            )
              retryAfter = rawHeaders[i + 1]!.toString('latin1');
          }
          return true;
        },
        onData(chunk: Buffer) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          stop.settled();
          const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          // As undici's body.text(): UTF-8, a byte-order mark dropped, invalid bytes replaced.
          const text = bytes.toString('utf8');
          resolve({ status, retryAfter, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text });
        },
        onError(err: Error) {
          stop.settled();
          reject(err);
        },
      },
    );
  });
}

async function postJsonOnce(
  url: string,
  body: string | (() => AsyncIterable<string>),
  opts: PostOptions,
  stop: RequestStop,
): Promise<unknown> {
  let answer: Answer;
  try {
    answer = await dispatchPost(
      poolFor(url, opts.connections ?? 64),
      new URL(url),
      typeof body === 'string' ? body : Readable.from(body()),
      { 'content-type': 'application/json', ...opts.headers },
      opts.timeoutMs,
      stop,
    );
  } catch (err) {
    throw classifyError(err, url, opts.signal);
  }
  const { status, text } = answer;
  const answered = { url, status, body: text };
  if (status === 429) {
    throw new RequestFailure('http_429', `${url} answered 429`, true, retryAfterMs(answer.retryAfter), answered);
  }
  if (status >= 500) {
    throw new RequestFailure(
      'http_5xx',
      `${url} answered ${status}: ${text.slice(0, 200)}`,
      true,
      retryAfterMs(answer.retryAfter),
      answered,
    );
  }
  if (status >= 400)
    throw new RequestFailure(
      'http_4xx',
      `${url} answered ${status}: ${text.slice(0, 500)}`,
      false,
      undefined,
      answered,
    );
  try {
    return (opts.parse ?? JSON.parse)(text);
  } catch {
    // A 200 with a torn or non-JSON body is what an overloaded proxy sends; trying again usually works.
    throw new RequestFailure(
      'invalid_response',
      `${url} answered ${status} with a body that is not JSON: ${text.slice(0, 120)}`,
      true,
    );
  }
}

/** GETs a URL and returns its text; used for health checks and head-server discovery. */
export async function getText(url: string, timeoutMs: number): Promise<string> {
  let res;
  try {
    res = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw classifyError(err, url);
  }
  const text = await res.body.text();
  if (res.statusCode >= 400) throw new RequestFailure('http_4xx', `${url} answered ${res.statusCode}`, false);
  return text;
}
