import YAML from 'yaml';
import { listenJson, notFound, requireMethod, type RunningServer } from './http';

// A NeMo Gym head server: `GET /global_config_dict_yaml` tells clients where every server runs.
// NeMo Gym returns the YAML text as a JSON string, and its clients JSON-decode before parsing YAML.

export interface ServerAddress {
  host: string;
  port: number;
}

export interface EmbeddedTopology {
  head: ServerAddress;
  model: ServerAddress & { name: string };
  resources: ServerAddress & { name: string };
  agent: ServerAddress & { name: string; maxSteps: number };
}

/** The global config dict: server name → {server type: {implementation: {host, port, ...}}}. */
export function buildGlobalConfigDict(t: EmbeddedTopology): Record<string, unknown> {
  return {
    head_server: { host: t.head.host, port: t.head.port },
    [t.model.name]: {
      responses_api_models: {
        pivot_miner_policy_simulator: {
          entrypoint: 'servers/policyModel.ts',
          host: t.model.host,
          port: t.model.port,
          simulated: true,
        },
      },
    },
    [t.resources.name]: {
      resources_servers: {
        travel_assistant: {
          entrypoint: 'servers/resources.ts',
          host: t.resources.host,
          port: t.resources.port,
          domain: 'agent',
          verified: false,
          description:
            'Travel assistant tools (weather, temperature and currency conversion, landmarks, flight prices)',
        },
      },
    },
    [t.agent.name]: {
      responses_api_agents: {
        simple_agent: {
          entrypoint: 'servers/agent.ts',
          host: t.agent.host,
          port: t.agent.port,
          max_steps: t.agent.maxSteps,
          resources_server: { type: 'resources_servers', name: t.resources.name },
          model_server: { type: 'responses_api_models', name: t.model.name },
        },
      },
    },
  };
}

export async function startHeadServer(options: {
  host?: string;
  port?: number;
  globalConfigDict: () => Record<string, unknown>;
}): Promise<RunningServer> {
  return listenJson({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    handler: (request) => {
      if (request.path === '/health') return { body: { status: 'ok' } };
      if (request.path === '/global_config_dict_yaml') {
        requireMethod(request, 'GET');
        return { body: YAML.stringify(options.globalConfigDict()) };
      }
      return notFound(request);
    },
  });
}
