import { DEFAULT_MAX_STEPS, startAgentServer } from './agent';
import { startFaultFront } from './faults';
import { type FaultsConfig } from '../contracts/faultsConfig';
import { buildGlobalConfigDict, startHeadServer } from './head';
import type { RunningServer } from './http';
import { startPolicyModelServer } from './policyModel';
import { startResourcesServer } from './resources';

// The embedded NeMo Gym-style stack: simulated policy model, travel resources server, simple agent
// and head server, all real HTTP servers on loopback. Only the LLM is simulated.

/** The agent name demo configs route rows to (`agent_ref.name`). */
export const EMBEDDED_AGENT_NAME = 'demo_tool_agent';
export const EMBEDDED_MODEL_SERVER_NAME = 'policy_model';
export const EMBEDDED_RESOURCES_SERVER_NAME = 'travel_assistant_resources_server';

export interface EmbeddedStackOptions {
  seed: number;
  host?: string;
  ports?: { model?: number; resources?: number; agent?: number; head?: number };
  latencyMs?: number;
  /** Requests the policy model answers at once (policyModel.ts `slots`); unset = no limit. */
  modelSlots?: number;
  log?: (line: string) => void;
  /** Fault injection in front of the model and agent servers (chaos runs and failure tests only). */
  faults?: FaultsConfig;
}

export interface EmbeddedStack {
  urls: { model: string; resources: string; agent: string; head: string };
  names: { agent: string; model: string; resources: string };
  close(): Promise<void>;
}

export async function startEmbeddedStack(options: EmbeddedStackOptions): Promise<EmbeddedStack> {
  const host = options.host ?? '127.0.0.1';
  const ports = options.ports ?? {};
  const started: RunningServer[] = [];
  const close = async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
  };
  try {
    const model = await startPolicyModelServer({
      seed: options.seed,
      host,
      port: ports.model ?? 0,
      latencyMs: options.latencyMs,
      slots: options.modelSlots,
      log: options.log,
    });
    started.push(model);
    const resources = await startResourcesServer({ host, port: ports.resources ?? 0 });
    started.push(resources);
    const agent = await startAgentServer({
      modelUrl: model.url,
      resourcesUrl: resources.url,
      host,
      port: ports.agent ?? 0,
    });
    started.push(agent);
    // With faults configured the pipeline (and the head server) see fault fronts; the agent still
    // talks to the model directly, so each fault hits exactly one request the pipeline made.
    const faults = options.faults;
    const front = async (server: 'agent' | 'model', real: RunningServer): Promise<RunningServer> => {
      const config = faults?.[server];
      if (!faults || !config) return real;
      const faulty = await startFaultFront({
        server,
        upstreamUrl: real.url,
        faults: config,
        seed: faults.seed ?? options.seed,
        host,
        eventsJsonl: faults.events_jsonl,
      });
      started.push(faulty);
      return faulty;
    };
    const modelFront = await front('model', model);
    const agentFront = await front('agent', agent);
    let headAddress = { host, port: 0 };
    const head = await startHeadServer({
      host,
      port: ports.head ?? 0,
      globalConfigDict: () =>
        buildGlobalConfigDict({
          head: headAddress,
          model: { name: EMBEDDED_MODEL_SERVER_NAME, host, port: modelFront.port },
          resources: { name: EMBEDDED_RESOURCES_SERVER_NAME, host, port: resources.port },
          agent: { name: EMBEDDED_AGENT_NAME, host, port: agentFront.port, maxSteps: DEFAULT_MAX_STEPS },
        }),
    });
    headAddress = { host, port: head.port };
    started.push(head);
    return {
      urls: { model: modelFront.url, resources: resources.url, agent: agentFront.url, head: head.url },
      names: {
        agent: EMBEDDED_AGENT_NAME,
        model: EMBEDDED_MODEL_SERVER_NAME,
        resources: EMBEDDED_RESOURCES_SERVER_NAME,
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
