import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch } from 'undici';
import { setTimeout as sleepAbortable } from 'node:timers/promises';
import { FAULT_KINDS, type FaultKind, type FaultRule, type ServerFaults } from '../contracts/faultsConfig';
import { sendJson, sleep, type RunningServer } from './http';

// Fault injection for the embedded servers: a front that sits on the URL the pipeline uses and
// forwards to the real simulator, failing some requests on the way. It is a separate hop rather than
// code inside each server so the agent's own calls to the model stay clean: a fault hits exactly the
// request the pipeline sent, which keeps "how often can one rollout fail" countable (see below).
//
// Decisions are a pure function of (seed, server, request key, occurrence), where the key is the
// rollout key `_ng_task_index:_ng_rollout_index` when the body has one and a body hash otherwise, and
// the occurrence counts how often this front has seen that key. Retries of a rollout send the same
// body, so a chaos run faults the same requests every time it is replayed on one process.

export interface FaultEvent {
  server: string;
  kind: FaultKind;
  key: string;
  occurrence: number;
  rule: boolean;
}

export interface FaultCounts {
  server: string;
  requests: number;
  injected: Record<FaultKind, number>;
}

export interface FaultFront extends RunningServer {
  counts(): FaultCounts;
}

/** Uniform in [0, 1) from a hash, so every decision is reproducible from the seed alone. */
function unit(...parts: Array<string | number>): number {
  return createHash('sha256').update(parts.join('\u0000')).digest().readUInt32BE(0) / 2 ** 32;
}

/** The key faults are decided on: the rollout key when the body carries one, else a hash of the body text. */
export function faultRequestKey(text: string, body: unknown): string {
  const row = body as { _ng_task_index?: unknown; _ng_rollout_index?: unknown } | undefined;
  if (row && typeof row._ng_task_index === 'number' && typeof row._ng_rollout_index === 'number') {
    return `${row._ng_task_index}:${row._ng_rollout_index}`;
  }
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function matches(rule: FaultRule, body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  return Object.entries(rule.match).every(([field, value]) => (body as Record<string, unknown>)[field] === value);
}

/** The fault decision logic, separate from HTTP so it can be tested and reasoned about alone. */
export class FaultPlan {
  private readonly seen = new Map<string, number>();
  private readonly randomFaults = new Map<string, number>();
  private arrivals = 0;

  constructor(
    private readonly server: string,
    private readonly faults: ServerFaults,
    private readonly seed: number,
  ) {}

  decide(key: string, body: unknown): { kind: FaultKind; occurrence: number; rule: boolean } | undefined {
    const occurrence = this.seen.get(key) ?? 0;
    this.seen.set(key, occurrence + 1);
    const arrival = this.arrivals++;
    for (const rule of this.faults.rules) {
      if (matches(rule, body) && (rule.times === undefined || occurrence < rule.times))
        return { kind: rule.kind, occurrence, rule: true };
    }
    const used = this.randomFaults.get(key) ?? 0;
    if (used >= this.faults.max_faults_per_request) return undefined;
    let kind: FaultKind | undefined;
    const burst = this.faults.burst_5xx;
    if (burst && arrival % burst.every >= burst.every - burst.length) kind = 'http_5xx';
    else if (unit(this.seed, this.server, key, occurrence) < this.faults.rate) {
      kind =
        this.faults.kinds[Math.floor(unit(this.seed, this.server, key, occurrence, 'kind') * this.faults.kinds.length)];
    }
    if (!kind) return undefined;
    this.randomFaults.set(key, used + 1);
    return { kind, occurrence, rule: false };
  }
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const FORWARDED_REQUEST_HEADERS = ['content-type', 'cookie', 'authorization'];

async function forward(
  upstream: string,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  // undici's fetch, as the agent relays: its keep-alive margin keeps a proxied request off a closing socket.
  const res = await fetch(new URL(req.url ?? '/', upstream), {
    method: req.method,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
  });
  const out: Record<string, string | string[]> = {
    'content-type': res.headers.get('content-type') ?? 'application/json',
  };
  const cookies = res.headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return { status: res.status, headers: out, body: Buffer.from(await res.arrayBuffer()) };
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return sleepAbortable(ms, undefined, { signal }).catch(() => undefined);
}

export interface FaultFrontOptions {
  /** Label used in counts and events: `agent` or `model`. */
  server: string;
  upstreamUrl: string;
  faults: ServerFaults;
  seed: number;
  host?: string;
  port?: number;
  eventsJsonl?: string;
}

/** Starts a fault-injecting front for `upstreamUrl`; `GET /_faults` answers the counts so far. */
export async function startFaultFront(options: FaultFrontOptions): Promise<FaultFront> {
  const { faults } = options;
  const plan = new FaultPlan(options.server, faults, options.seed);
  const injected = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  let requests = 0;
  const counts = (): FaultCounts => ({ server: options.server, requests, injected: { ...injected } });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRaw(req);
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/_faults' && req.method === 'GET') return sendJson(res, 200, counts());
    if (req.method !== 'POST') {
      const reply = await forward(options.upstreamUrl, req, body);
      res.writeHead(reply.status, reply.headers).end(reply.body);
      return;
    }
    requests++;
    const text = body.toString('utf8');
    const parsed = parseOrUndefined(text);
    const key = faultRequestKey(text, parsed);
    const decision = plan.decide(key, parsed);
    if (decision) {
      injected[decision.kind]++;
      const event: FaultEvent = {
        server: options.server,
        kind: decision.kind,
        key,
        occurrence: decision.occurrence,
        rule: decision.rule,
      };
      // Synchronous so the line is on disk before the client sees the fault, even if the process dies next.
      if (options.eventsJsonl) appendFileSync(options.eventsJsonl, `${JSON.stringify(event)}\n`);
    }
    const retryAfter: Record<string, string> =
      faults.retry_after_s === undefined ? {} : { 'retry-after': String(faults.retry_after_s) };
    switch (decision?.kind) {
      case 'http_5xx':
        return sendJson(res, 503, { error: `injected fault: ${options.server} server unavailable` }, retryAfter);
      case 'http_429':
        return sendJson(
          res,
          429,
          { error: `injected fault: ${options.server} server rate limit` },
          { 'retry-after': '1', ...retryAfter },
        );
      case 'reset':
        req.socket.destroy();
        return;
      case 'hang': {
        // Held until the client gives up (or hang_ms), without a timer outliving the request.
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        await sleepUnlessAborted(faults.hang_ms, gone.signal);
        req.socket.destroy();
        return;
      }
      case 'slow':
        await sleep(faults.slow_ms);
        break;
    }
    const reply = await forward(options.upstreamUrl, req, body);
    if (decision?.kind === 'torn_json') {
      const torn = reply.body.subarray(0, Math.max(1, Math.floor(reply.body.length / 2)));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': torn.length }).end(torn);
      return;
    }
    res.writeHead(reply.status, reply.headers).end(reply.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(res, 502, { error: `fault front for ${options.server}: ${(err as Error).message}` });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    counts,
    close: () =>
      new Promise<void>((done, fail) => {
        server.close((err) => (err ? fail(err) : done()));
        server.closeAllConnections();
      }),
  };
}
