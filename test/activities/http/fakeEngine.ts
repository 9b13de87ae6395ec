import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in engine replica for the replica tests: it records what it was sent and how many requests
// it held at once, and can hold requests, answer late, fail with a status, hang, or go away and come
// back on the same port.

export type EngineMode =
  { kind: 'answer'; delayMs?: number } | { kind: 'hold' } | { kind: 'status'; status: number } | { kind: 'hang' };

export interface FakeEngine {
  readonly url: string;
  /** Bodies of the requests it took, in arrival order. */
  readonly received: Array<Record<string, unknown>>;
  readonly inFlight: number;
  readonly peak: number;
  mode: EngineMode;
  /** Answers every held request. */
  releaseAll(): void;
  /** Answers the held request whose body has this `id`. */
  release(id: string): void;
  /** Stops listening and drops every connection: requests in flight fail, new ones are refused. */
  cutOff(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeEngine(name: string): Promise<FakeEngine> {
  const received: Array<Record<string, unknown>> = [];
  const held = new Map<string, ServerResponse>();
  let inFlight = 0;
  let peak = 0;
  let port = 0;
  const answer = (res: ServerResponse, body: Record<string, unknown>) => {
    inFlight--;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ engine: name, id: body.id }));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      received.push(body);
      inFlight++;
      peak = Math.max(peak, inFlight);
      res.once('close', () => {
        if (held.get(String(body.id)) !== res) return;
        held.delete(String(body.id));
        inFlight--;
      });
      const mode = engine.mode;
      if (mode.kind === 'hold') held.set(String(body.id), res);
      else if (mode.kind === 'hang') held.set(String(body.id), res);
      else if (mode.kind === 'status') {
        inFlight--;
        res.writeHead(mode.status).end('{"error":"engine failure"}');
      } else if (mode.delayMs) setTimeout(() => answer(res, body), mode.delayMs);
      else answer(res, body);
    });
  };
  let server: Server = createServer(handle);
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  const engine: FakeEngine = {
    url: `http://127.0.0.1:${port}`,
    received,
    get inFlight() {
      return inFlight;
    },
    get peak() {
      return peak;
    },
    mode: { kind: 'answer' },
    releaseAll() {
      for (const [id, res] of [...held]) {
        held.delete(id);
        answer(res, { id });
      }
    },
    release(id) {
      const res = held.get(id);
      if (!res) throw new Error(`${name} holds no request ${id} (holds: ${[...held.keys()].join(', ')})`);
      held.delete(id);
      answer(res, { id });
    },
    async cutOff() {
      held.clear();
      await stop();
      inFlight = 0;
    },
    async restore() {
      server = createServer(handle);
      await listen();
    },
    close: stop,
  };
  return engine;
}
