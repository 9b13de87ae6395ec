import { setTimeout as sleep } from 'node:timers/promises';
import { heartbeat, log } from '@temporalio/activity';
import { ConfigError } from '../../contracts/errors';
import YAML from 'yaml';
import { startEmbeddedStack } from '../../servers/embeddedStack';
import type { FaultsConfig } from '../../contracts/faultsConfig';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import { resolveInside } from './configFile';
import { collectDefaultAgent, stageSettings } from '../../contracts/stageSettings';
import { getText, RequestFailure } from '../http/client';
import {
  agentType,
  ambiguousEnvironmentServerMessage,
  declaredEnvironmentServers,
  legacyEnvironmentServerName,
  type GlobalConfig,
} from '../../gym/environmentServers';

// The `serve` stage. Endpoints are resolved inside each activity instead of being passed through the
// workflow, because embedded servers live in the worker process: after a worker crash they come back
// on new ports, and a URL remembered in workflow history would point at nothing.

export interface Endpoints {
  agentUrl: string;
  /** One base URL, or the base URLs of the model's replicas. */
  modelUrl: string | string[];
  modelApi: 'responses' | 'chat_completions';
  modelName?: string;
  simulated: boolean;
}

type EmbeddedStack = Awaited<ReturnType<typeof startEmbeddedStack>>;
const embeddedStacks = new Map<string, Promise<EmbeddedStack>>();

// Keyed by seed and fault config: one worker may serve a faulty run and a clean run of the same seed.
function embeddedStack(seed: number, faults?: FaultsConfig): Promise<EmbeddedStack> {
  const stackKey = JSON.stringify({ seed, faults });
  const running = embeddedStacks.get(stackKey);
  if (running) return running;
  log.info('starting embedded NeMo Gym-style servers with a SEEDED POLICY SIMULATOR (not an LLM)', {
    seed,
    faults: faults !== undefined,
  });
  const starting: Promise<EmbeddedStack> = startEmbeddedStack({ seed, faults });
  starting.catch(() => embeddedStacks.delete(stackKey));
  embeddedStacks.set(stackKey, starting);
  return starting;
}

/** Stops embedded servers this worker started; called on worker shutdown. */
export async function closeEmbeddedStacks(): Promise<void> {
  const stacks = [...embeddedStacks.values()];
  embeddedStacks.clear();
  await Promise.all(stacks.map(async (s) => (await s).close().catch(() => undefined)));
}

interface ServerAddress {
  host: string;
  port: number;
}

/** NeMo Gym binds servers to 0.0.0.0 and lists them so; a client reaches them on loopback. */
function serverUrl({ host, port }: ServerAddress): string {
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}

/**
 * `name`'s address in a NeMo Gym global config dict (server name → {<kind>: {<impl>: {host, port}}}),
 * taken from its first kind and implementation as global_config.py get_first_server_config_dict does.
 */
function findServer(globalConfig: GlobalConfig, name: string, kind?: string): ServerAddress | undefined {
  const block = globalConfig[name];
  if (!block || typeof block !== 'object') return undefined;
  const [firstKind, impls] = Object.entries(block as Record<string, unknown>)[0] ?? [];
  if (kind !== undefined && firstKind !== kind) return undefined;
  if (!impls || typeof impls !== 'object') return undefined;
  const { host, port } = (Object.values(impls as Record<string, unknown>)[0] ?? {}) as Partial<ServerAddress>;
  return typeof host === 'string' && typeof port === 'number' ? { host, port } : undefined;
}

/**
 * The last config text parsed and its value. Every chunk asks the head server, which answers the
 * same text for as long as its servers run; parsing a large config took a few milliseconds a chunk.
 * Callers only read the value.
 */
let lastParsed: { text: string; config: GlobalConfig } | undefined;

async function fetchGlobalConfig(headUrl: string): Promise<GlobalConfig> {
  let text = await getText(new URL('/global_config_dict_yaml', headUrl).toString(), 10_000);
  // NeMo Gym's head server answers with the YAML text JSON-encoded as a string.
  if (text.startsWith('"')) text = JSON.parse(text) as string;
  if (lastParsed?.text !== text) lastParsed = { text, config: (YAML.parse(text) ?? {}) as GlobalConfig };
  return lastParsed.config;
}

function embeddedFaults(plan: RunPlan): FaultsConfig | undefined {
  const { servers } = plan.config;
  if (servers.mode !== 'embedded' || !servers.faults) return undefined;
  const events = servers.faults.events_jsonl;
  return { ...servers.faults, events_jsonl: events && resolveInside(plan.baseDir, plan.baseDir, events) };
}

function embeddedStackFor(plan: RunPlan): Promise<EmbeddedStack> {
  const { servers, seed } = plan.config;
  return embeddedStack((servers.mode === 'embedded' ? servers.seed : undefined) ?? seed, embeddedFaults(plan));
}

export async function resolveEndpoints(plan: RunPlan): Promise<Endpoints> {
  const { servers, collect, local_profile: lp, publish } = plan.config;
  if (servers.mode === 'embedded') {
    const stack = await embeddedStackFor(plan);
    return {
      agentUrl: stack.urls.agent,
      modelUrl: lp.model.url ?? stack.urls.model,
      modelApi: lp.model.api,
      modelName: lp.model.model,
      simulated: lp.model.url === undefined,
    };
  }
  const modelServerName = publish.model_server_name;
  const globalConfig = servers.head_url ? await fetchGlobalConfig(servers.head_url) : {};
  const discovered = (name: string) => {
    const address = findServer(globalConfig, name);
    return address && serverUrl(address);
  };
  // Without a default agent, rows route by their own agent_ref to agents the head server lists: it stands for them.
  const agentName = collectDefaultAgent(collect);
  const agentUrl = servers.agent_url ?? (agentName === undefined ? servers.head_url : discovered(agentName));
  const modelUrl = lp.model.url ?? discovered(modelServerName);
  if (!agentUrl || !modelUrl) {
    const missing = agentName === undefined ? 'a head server (collect names no agent_name)' : `agent "${agentName}"`;
    throw new ConfigError(
      `servers.mode=${servers.mode}: cannot find ${!agentUrl ? missing : `model server "${modelServerName}"`}; ` +
        'set servers.agent_url / local_profile.model.url, or servers.head_url pointing at a NeMo Gym head server that lists it',
    );
  }
  return { agentUrl, modelUrl, modelApi: lp.model.api, modelName: lp.model.model, simulated: false };
}

/**
 * Every agent a row's `agent_ref.name` may route to, name → base URL. ng_collect_rollouts posts each
 * row to the server its own `agent_ref.name` names, looked up in the head server's global config
 * (rollout_collection.py RolloutCollectionHelper.run_examples → ServerClient.post(server_name=...)),
 * so one input file may mix agents. `servers.agent_url` serves the config's `collect.agent_name`.
 */
export async function agentDirectory(plan: RunPlan): Promise<Map<string, string>> {
  const { servers, collect } = plan.config;
  if (servers.mode === 'embedded') {
    const stack = await embeddedStackFor(plan);
    return new Map([[stack.names.agent, stack.urls.agent]]);
  }
  const agents = new Map<string, string>();
  if (servers.head_url) {
    const globalConfig = await fetchGlobalConfig(servers.head_url);
    for (const name of Object.keys(globalConfig)) {
      const address = findServer(globalConfig, name, 'responses_api_agents');
      if (address) agents.set(name, serverUrl(address));
    }
  }
  if (servers.agent_url) {
    const agentName = collectDefaultAgent(collect);
    if (agentName === undefined)
      throw new ConfigError(
        'servers.agent_url serves collect.agent_name (or collect.agent_map._default), which is not set',
      );
    agents.set(agentName, servers.agent_url);
  }
  return agents;
}

/** The head server's config (the embedded servers' own head included), or nothing when no head is configured. */
export async function headGlobalConfig(plan: RunPlan): Promise<GlobalConfig> {
  const { servers } = plan.config;
  const headUrl = servers.mode === 'embedded' ? (await embeddedStackFor(plan)).urls.head : servers.head_url;
  return headUrl ? await fetchGlobalConfig(headUrl) : {};
}

/**
 * Names the environment server each agent's rollouts ran through, for the aggregate metrics: from the
 * head's config (the embedded servers' own head included), or from the agent's name alone when no
 * head is configured. Several environment servers in front of one agent leave 0.7.0 unable to choose
 * for a row routed by its agent, and so does this.
 */
export async function environmentServerNamer(
  plan: RunPlan,
  stage: RolloutStage,
): Promise<(agentName: string) => string> {
  // Legacy routing sends every collect row through one environment server, which names them all.
  const legacy = stageSettings(plan, stage).legacyEnvironmentServer;
  if (legacy !== undefined) return () => legacy;
  const config = await headGlobalConfig(plan);
  return (agentName) => {
    const declared = declaredEnvironmentServers(config, agentName);
    if (declared.length > 1) throw new ConfigError(ambiguousEnvironmentServerMessage(agentName, declared));
    return declared[0] ?? legacyEnvironmentServerName(agentName, agentType(config, agentName));
  };
}

/** Why `name` cannot be routed, and where the known names come from, for an error a user can act on. */
export function unknownAgentReason(plan: RunPlan, name: string, agents: ReadonlyMap<string, string>): string {
  const known = agents.size > 0 ? [...agents.keys()].map((n) => `"${n}"`).join(', ') : 'none';
  const source =
    plan.config.servers.mode === 'embedded'
      ? 'the embedded servers run one agent'
      : 'agents are the responses_api_agents servers the head server (servers.head_url) lists, plus collect.agent_name when servers.agent_url is set';
  return `agent_ref.name "${name}" is not an agent the servers know (known: ${known}; ${source})`;
}

/** Any HTTP answer (even 404 on /) proves a server is up; only connection errors count as down. */
async function checkUp(url: string): Promise<void> {
  heartbeat();
  await getText(url, 10_000).catch((err: Error & { failureClass?: string }) => {
    if (err.failureClass === 'http_4xx') return '';
    throw err;
  });
}

async function checkServers(
  plan: RunPlan,
): Promise<{ agentUrl: string; modelUrl: string | string[]; simulated: boolean }> {
  const endpoints = await resolveEndpoints(plan);
  await checkUp(endpoints.agentUrl);
  if (typeof endpoints.modelUrl === 'string') {
    await checkUp(endpoints.modelUrl);
  } else {
    // One replica up is enough to start: requests to one that is down move to the others, which
    // benches it until it answers again.
    const urls = endpoints.modelUrl;
    const checks = await Promise.allSettled(urls.map(checkUp));
    const down = checks.flatMap((check, i) =>
      check.status === 'rejected' ? [{ url: urls[i], reason: check.reason as Error }] : [],
    );
    if (down.length === checks.length) throw down[0]!.reason;
    if (down.length > 0)
      log.warn('model replicas down at start; their share goes to the others until they answer', {
        down: down.map((d) => `${d.url}: ${d.reason.message}`),
      });
  }
  return { agentUrl: endpoints.agentUrl, modelUrl: endpoints.modelUrl, simulated: endpoints.simulated };
}

/**
 * The serve stage: make sure every server the run needs answers before any work is scheduled.
 * Spawned stacks get `ready_timeout_s` to come up (model servers load weights for minutes); attached
 * ones must answer now, and otherwise Temporal's activity retries take over.
 */
export async function ensureServers(
  plan: RunPlan,
): Promise<{ agentUrl: string; modelUrl: string | string[]; simulated: boolean }> {
  const servers = plan.config.servers;
  const deadline = Date.now() + (servers.mode === 'spawn' ? servers.ready_timeout_s * 1000 : 0);
  for (;;) {
    try {
      return await checkServers(plan);
    } catch (err) {
      if (!(err instanceof RequestFailure && err.retryable) || Date.now() >= deadline) throw err;
      heartbeat();
      await sleep(500);
    }
  }
}
