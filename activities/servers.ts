import { setTimeout as sleep } from 'node:timers/promises';
import { heartbeat, log } from '@temporalio/activity';
import { ConfigError } from '../contracts/errors';
import YAML from 'yaml';
import { startEmbeddedStack } from '../servers/embeddedStack';
import type { FaultsConfig } from '../contracts/faultsConfig';
import type { RunPlan } from '../contracts/payloads';
import { resolveInside } from './configFile';
import { getText, RequestFailure } from './http/client';

// The `serve` stage. Endpoints are resolved inside each activity instead of being passed through the
// workflow, because embedded servers live in the worker process: after a worker crash they come back
// on new ports, and a URL remembered in workflow history would point at nothing.

export interface Endpoints {
  agentUrl: string;
  modelUrl: string;
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
  log.info('starting embedded NeMo Gym-style servers with a SEEDED POLICY SIMULATOR (not an LLM)', { seed, faults: faults !== undefined });
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

/** Finds `name`'s host/port in a NeMo Gym global config dict (server name → {<kind>: {<impl>: {host, port}}}). */
function findServer(globalConfig: Record<string, unknown>, name: string): ServerAddress | undefined {
  const block = globalConfig[name];
  if (!block || typeof block !== 'object') return undefined;
  for (const kind of Object.values(block as Record<string, unknown>)) {
    if (!kind || typeof kind !== 'object') continue;
    for (const impl of Object.values(kind as Record<string, unknown>)) {
      const { host, port } = (impl ?? {}) as Partial<ServerAddress>;
      if (typeof host === 'string' && typeof port === 'number') return { host, port };
    }
  }
  return undefined;
}

async function discoverFromHead(headUrl: string, names: string[]): Promise<Map<string, string>> {
  let text = await getText(new URL('/global_config_dict_yaml', headUrl).toString(), 10_000);
  // NeMo Gym's head server answers with the YAML text JSON-encoded as a string.
  if (text.startsWith('"')) text = JSON.parse(text) as string;
  const globalConfig = (YAML.parse(text) ?? {}) as Record<string, unknown>;
  const found = new Map<string, string>();
  for (const name of names) {
    const addr = findServer(globalConfig, name);
    if (addr) found.set(name, `http://${addr.host === '0.0.0.0' ? '127.0.0.1' : addr.host}:${addr.port}`);
  }
  return found;
}

export async function resolveEndpoints(plan: RunPlan): Promise<Endpoints> {
  const { servers, collect, local_profile: lp, publish } = plan.config;
  if (servers.mode === 'embedded') {
    const faults = servers.faults && {
      ...servers.faults,
      events_jsonl: servers.faults.events_jsonl && resolveInside(plan.baseDir, plan.baseDir, servers.faults.events_jsonl),
    };
    const stack = await embeddedStack(servers.seed ?? plan.config.seed, faults);
    return {
      agentUrl: stack.urls.agent,
      modelUrl: lp.model.url ?? stack.urls.model,
      modelApi: lp.model.api,
      modelName: lp.model.model,
      simulated: lp.model.url === undefined,
    };
  }
  const modelServerName = publish.model_server_name;
  const discovered = servers.head_url
    ? await discoverFromHead(servers.head_url, [collect.agent_name, modelServerName])
    : new Map<string, string>();
  const agentUrl = servers.agent_url ?? discovered.get(collect.agent_name);
  const modelUrl = lp.model.url ?? discovered.get(modelServerName);
  if (!agentUrl || !modelUrl) {
    throw new ConfigError(
      `servers.mode=${servers.mode}: cannot find ${!agentUrl ? `agent "${collect.agent_name}"` : `model server "${modelServerName}"`}; ` +
        'set servers.agent_url / local_profile.model.url, or servers.head_url pointing at a NeMo Gym head server that lists it',
    );
  }
  return { agentUrl, modelUrl, modelApi: lp.model.api, modelName: lp.model.model, simulated: false };
}

async function checkServers(plan: RunPlan): Promise<{ agentUrl: string; modelUrl: string; simulated: boolean }> {
  const endpoints = await resolveEndpoints(plan);
  for (const url of [endpoints.agentUrl, endpoints.modelUrl]) {
    heartbeat();
    // Any HTTP answer (even 404 on /) proves the server is up; only connection errors count as down.
    await getText(url, 10_000).catch((err: Error & { failureClass?: string }) => {
      if (err.failureClass === 'http_4xx') return '';
      throw err;
    });
  }
  return { agentUrl: endpoints.agentUrl, modelUrl: endpoints.modelUrl, simulated: endpoints.simulated };
}

/**
 * The serve stage: make sure every server the run needs answers before any work is scheduled.
 * Spawned stacks get `ready_timeout_s` to come up (model servers load weights for minutes); attached
 * ones must answer now, and otherwise Temporal's activity retries take over.
 */
export async function ensureServers(plan: RunPlan): Promise<{ agentUrl: string; modelUrl: string; simulated: boolean }> {
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
