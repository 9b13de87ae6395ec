import {
  request as httpRequest,
  createServer,
  Agent as HttpAgent,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { openSync, writeSync } from 'node:fs';
import { startAgentServer, DEFAULT_MAX_STEPS } from '../../servers/agent';
import {
  EMBEDDED_AGENT_NAME,
  EMBEDDED_MODEL_SERVER_NAME,
  EMBEDDED_RESOURCES_SERVER_NAME,
} from '../../servers/embeddedStack';
import { buildGlobalConfigDict, startHeadServer } from '../../servers/head';
import { startPolicyModelServer } from '../../servers/policyModel';
import { startResourcesServer } from '../../servers/resources';

// The servers of the fleet's non-worker hosts, one process per host:
//   engine --port P --latency-ms L --slots S --seed N
//     a policy replica: the SEEDED POLICY SIMULATOR answering at most S requests at once, each
//     holding its slot L ms, so a replica's throughput is S/L whatever the machine's cores do (a
//     real engine's batch slots). The simulator answers the same bytes for the same request on every
//     replica, as replicas of one model with seeded sampling would. With --record FILE it appends
//     one line `<start ms> <end ms>` per generation to FILE (epoch ms, while it held its slot), for
//     the overlap bench's busy and idle figures.
//   gym --address A --engines URL,URL --seed N
//     agent, resources and head servers, and the model server the agent calls, which spreads over
//     the engine replicas by outstanding requests and fails over, as NeMo Gym's vllm_model does with
//     a list of base_url (the agent only ever sees one model server).

export const ENGINE_PORT = 8000;
export const GYM_PORTS = { head: 8100, agent: 8101, resources: 8102, model: 8103 } as const;

function optionalFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function flag(args: string[], name: string): string {
  const value = optionalFlag(args, name);
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

/** A writer of served spans to `file`, one synchronous append each so a killed engine loses none. */
function spanRecorder(file: string | undefined): ((startMs: number, endMs: number) => void) | undefined {
  if (file === undefined) return undefined;
  const fd = openSync(file, 'a');
  return (startMs, endMs) => {
    writeSync(fd, `${startMs.toFixed(3)} ${endMs.toFixed(3)}\n`);
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function forward(
  agent: HttpAgent,
  base: string,
  req: IncomingMessage,
  body: Buffer,
  timeoutMs: number,
): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url ?? '/', base);
    const out = httpRequest(
      url,
      {
        method: req.method,
        agent,
        headers: {
          'content-type': req.headers['content-type'] ?? 'application/json',
          'content-length': String(body.length),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (p: Buffer) => parts.push(p));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: { 'content-type': String(res.headers['content-type'] ?? 'application/json') },
            body: Buffer.concat(parts),
          }),
        );
        res.on('error', reject);
      },
    );
    out.setTimeout(timeoutMs, () => out.destroy(new Error(`no answer from ${base} within ${timeoutMs} ms`)));
    out.on('error', reject);
    out.end(body);
  });
}

function reply(res: ServerResponse, up: Upstream): void {
  res.writeHead(up.status, { ...up.headers, 'content-length': String(up.body.length) });
  res.end(up.body);
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

async function engine(args: string[]): Promise<void> {
  const latencyMs = Number(flag(args, 'latency-ms'));
  const slots = Number(flag(args, 'slots'));
  const port = Number(flag(args, 'port'));
  await startPolicyModelServer({
    seed: Number(flag(args, 'seed')),
    host: '0.0.0.0',
    port,
    latencyMs,
    slots,
    onServed: spanRecorder(optionalFlag(args, 'record')),
    log: (l) => console.error(l),
  });
}

/** The gym-side model server over the engine replicas: least outstanding first, a failed replica benched. */
async function replicaModelServer(engines: string[], port: number): Promise<void> {
  const replicas = engines.map((url) => ({
    url,
    outstanding: 0,
    benchedUntil: 0,
    agent: new HttpAgent({ keepAlive: true }),
  }));
  // A call to a cut-off replica hangs until this timeout; the caller's own timeout (the agent's) is
  // longer, so the call moves to another replica instead of failing the rollout.
  const callTimeoutMs = 8_000;
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      for (let attempt = 0; ; attempt++) {
        const now = Date.now();
        const live = replicas.filter((r) => r.benchedUntil <= now);
        const pool = live.length > 0 ? live : replicas;
        const r = pool.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
        r.outstanding++;
        try {
          const up = await forward(r.agent, r.url, req, body, callTimeoutMs);
          if (up.status >= 500 && attempt < 10) throw new Error(`status ${up.status}`);
          return reply(res, up);
        } catch (err) {
          r.benchedUntil = Date.now() + 5_000;
          if (attempt >= 10) throw err;
        } finally {
          r.outstanding--;
        }
      }
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502).end(String(err));
    });
  });
  server.keepAliveTimeout = 60_000;
  await listen(server, '0.0.0.0', port);
}

async function gym(args: string[]): Promise<void> {
  const address = flag(args, 'address');
  const engines = flag(args, 'engines').split(',');
  await replicaModelServer(engines, GYM_PORTS.model);
  const modelUrl = `http://127.0.0.1:${GYM_PORTS.model}`;
  const resources = await startResourcesServer({ host: '0.0.0.0', port: GYM_PORTS.resources });
  await startAgentServer({
    modelUrl,
    resourcesUrl: `http://127.0.0.1:${resources.port}`,
    host: '0.0.0.0',
    port: GYM_PORTS.agent,
  });
  await startHeadServer({
    host: '0.0.0.0',
    port: GYM_PORTS.head,
    globalConfigDict: () =>
      buildGlobalConfigDict({
        head: { host: address, port: GYM_PORTS.head },
        model: { name: EMBEDDED_MODEL_SERVER_NAME, host: address, port: GYM_PORTS.model },
        resources: { name: EMBEDDED_RESOURCES_SERVER_NAME, host: address, port: GYM_PORTS.resources },
        agent: { name: EMBEDDED_AGENT_NAME, host: address, port: GYM_PORTS.agent, maxSteps: DEFAULT_MAX_STEPS },
      }),
  });
  console.error(`gym host ${address}: agent, resources, head, and a model server over ${engines.join(', ')}`);
}

if (require.main === module) {
  const [role, ...args] = process.argv.slice(2);
  const main = role === 'engine' ? engine : role === 'gym' ? gym : undefined;
  if (!main) {
    console.error('usage: serve.ts engine|gym ...');
    process.exit(2);
  }
  main(args).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
