import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';

// Minimal JSON-over-HTTP plumbing shared by the embedded servers (node:http only, no framework).

const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/** An error that becomes an HTTP reply with this status and a JSON `{error, details?}` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface JsonRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body; undefined for an empty body. */
  body: unknown;
  /** The body's text, for a handler that must read numbers as their lexemes (`1.0` is not `1` to Python). */
  text: string;
}

export interface JsonReply {
  status?: number;
  /** Sent as JSON.stringify writes it, unless `text` is given. */
  body?: unknown;
  /** A body already written as JSON, sent as it is (Python's number kinds kept). */
  text?: string;
  headers?: Record<string, string | string[]>;
}

export type JsonHandler = (request: JsonRequest) => Promise<JsonReply> | JsonReply;

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage, limitBytes: number): Promise<{ text: string; body: unknown }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new HttpError(413, `request body exceeds ${limitBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { text, body: undefined };
  try {
    return { text, body: JSON.parse(text) };
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Validates a request body; a mismatch is the client's fault, so it is a 422 naming each issue. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new HttpError(
    422,
    'request body does not match the expected schema',
    parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  );
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
  written?: string,
): void {
  const text = written ?? JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Starts a JSON server on host:port (port 0 picks a free port). Handler errors never stop the server. */
export function listenJson(options: {
  host: string;
  port: number;
  handler: JsonHandler;
  bodyLimitBytes?: number;
}): Promise<RunningServer> {
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const { text, body } = await readBody(req, limit);
        const reply = await options.handler({
          method: req.method ?? 'GET',
          path: url.pathname,
          headers: req.headers,
          body,
          text,
        });
        sendJson(res, reply.status ?? 200, reply.body, reply.headers, reply.text);
      } catch (err) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (err instanceof HttpError) {
          sendJson(
            res,
            err.status,
            err.details === undefined ? { error: err.message } : { error: err.message, details: err.details },
          );
        } else {
          sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
        }
      }
    })();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${options.host}:${port}`,
        host: options.host,
        port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}

export function notFound(request: JsonRequest): never {
  throw new HttpError(404, `no route for ${request.method} ${request.path}`);
}

export function requireMethod(request: JsonRequest, method: string): void {
  if (request.method !== method) throw new HttpError(405, `${request.path} accepts ${method} only`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
