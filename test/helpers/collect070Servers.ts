import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_STEPS } from '../../servers/agent';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { buildGlobalConfigDict, startHeadServer } from '../../servers/head';
import type { RunningServer } from '../../servers/http';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';

// The servers both collections of a 0.7.0 comparison (collect070.ts) reach: the seeded policy
// simulator, resources server and agent, the agent behind a front that can rewrite its answers, and
// a head server that lists a `legacy_agent` environment server whose address is the agent's front,
// since 0.7.0 posts rows to an environment server rather than to the agent.

// Not the name 0.7.0 would generate for the agent's relay (`demo_tool_environment_server`): each
// aggregate-metrics entry then shows that both read the name from the head's config.
export const ENVIRONMENT_SERVER = 'travel_desk_relay';

/** Rewrites the agent's answer (its bytes) to a /run request (parsed, and its `body`), e.g. to report a failure, or answers an HTTP error instead. */
export type AnswerScript = (
  request: Record<string, unknown>,
  answer: string,
  body: string,
) => string | { status: number; body: string };

export interface CollectServers {
  stack: EmbeddedStack;
  head: RunningServer;
  /** What the agent front does to answers: as they are until a test sets it. */
  script: AnswerScript;
  /** The bodies POSTed to the agent's /aggregate_metrics through its front, in arrival order. */
  aggregateRequests: string[];
  close(): Promise<void>;
}

/** The agent as both collections reach it: each /run answer passed through `servers.script`. */
function startAgentFront(
  agentUrl: string,
  servers: Pick<CollectServers, 'script' | 'aggregateRequests'>,
): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/aggregate_metrics') servers.aggregateRequests.push(body);
      fetch(new URL(req.url ?? '/', agentUrl), {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body,
      })
        .then(async (answer) => {
          const text = await answer.text();
          const out = req.url === '/run' && answer.ok ? servers.script(JSON.parse(body), text, body) : text;
          const { status, body: sent } = typeof out === 'string' ? { status: answer.status, body: out } : out;
          res.writeHead(status, { 'content-type': 'application/json' }).end(sent);
        })
        .catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function port(url: string): number {
  return Number(new URL(url).port);
}

/**
 * The agent under another name, with its environment server, for rows routed to several agents:
 * the same server (one stack serves one agent), listed twice in the head server.
 */
function aliasEntries(name: string, host: string, port: number, agentEntry: unknown): Record<string, unknown> {
  return {
    [name]: agentEntry,
    [legacyEnvironmentServerName(name)]: {
      environment_servers: {
        legacy_agent: { host, port, agent_server: { type: 'responses_api_agents', name } },
      },
    },
  };
}

/**
 * The embedded stack with `seed`, behind a head server that also lists the agent's environment
 * server, and the agent again under each of `aliases`.
 */
export async function startCollectServers(seed: number, aliases: string[] = []): Promise<CollectServers> {
  const stack = await startEmbeddedStack({ seed });
  const host = '127.0.0.1';
  const servers = { script: ((_request, answer) => answer) as AnswerScript, aggregateRequests: [] as string[] };
  const front = await startAgentFront(stack.urls.agent, servers);
  const frontPort = (front.address() as AddressInfo).port;
  const head: RunningServer = await startHeadServer({
    port: 0,
    globalConfigDict: () => {
      const dict = buildGlobalConfigDict({
        head: { host, port: head.port },
        model: { name: stack.names.model, host, port: port(stack.urls.model) },
        resources: { name: stack.names.resources, host, port: port(stack.urls.resources) },
        agent: { name: stack.names.agent, host, port: frontPort, maxSteps: DEFAULT_MAX_STEPS },
      });
      const aliased = aliases.map((name) => aliasEntries(name, host, frontPort, dict[stack.names.agent]));
      return Object.assign(dict, ...aliased, {
        [ENVIRONMENT_SERVER]: {
          environment_servers: {
            legacy_agent: {
              host,
              port: frontPort,
              agent_server: { type: 'responses_api_agents', name: stack.names.agent },
            },
          },
        },
      }) as Record<string, unknown>;
    },
  });
  const closeFront = () => new Promise<void>((resolve) => front.close(() => resolve()));
  return Object.assign(servers, {
    stack,
    head,
    close: async () => void (await Promise.all([head.close(), closeFront(), stack.close()])),
  });
}
