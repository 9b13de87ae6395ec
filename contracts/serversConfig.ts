import { z } from 'zod';
import { faultsConfigSchema } from './faultsConfig';

// The servers block of the pipeline config (contracts/config.ts): which NeMo Gym servers a run
// attaches to, spawns or embeds, and the policy engine's endpoint.

const urlSchema = z.url({ protocol: /^https?$/ });

/**
 * One engine, or its data-parallel replicas as a list, as NeMo Gym's vllm_model takes `base_url`.
 * Replicas are told apart by host and port, so a list naming one twice is refused.
 */
export const modelUrlSchema = z.union([
  urlSchema,
  z
    .array(urlSchema)
    .min(1)
    // Runs even when an element is not a URL (that one has its own issue), so it parses only the others.
    .refine(
      (urls) => {
        const origins = urls.filter((url) => URL.canParse(url)).map((url) => new URL(url).origin);
        return new Set(origins).size === origins.length;
      },
      { message: 'each replica needs its own host:port; this list names one twice' },
    ),
]);

export const modelEndpointSchema = z.strictObject({
  url: modelUrlSchema
    .optional()
    .describe(
      'Base URL serving /v1/responses or /v1/chat/completions, or a list of them for an engine served as replicas ' +
        '(requests go to the replica with the fewest in flight, a rollout stays on its replica, a failing one is benched); ' +
        'omitted = the embedded simulator (servers.mode embedded), or the model server named publish.model_server_name that the head server lists (attach, spawn)',
    ),
  api: z
    .enum(['responses', 'chat_completions'])
    .default('responses')
    .describe(
      'responses posts /v1/responses; chat_completions posts /v1/chat/completions (engines without the Responses API), translated both ways',
    ),
  model: z.string().optional().describe('Model name sent in each request, e.g. Qwen/Qwen3-30B-A3B'),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe('Name of the worker environment variable holding the API key; the key itself never enters a config'),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .default(120_000)
    .describe(
      'Timeout of one model request, in milliseconds; the lower of this and local_profile.request_timeout_ms applies',
    ),
  max_concurrency: z
    .number()
    .int()
    .positive()
    .default(16)
    .describe(
      'Model requests in flight from one worker process, to each replica when url is a list; the lower of this and local_profile.max_concurrency applies',
    ),
  unpack_extra_body: z
    .boolean()
    .default(false)
    .describe(
      'api responses only: also send metadata.extra_body keys (the per-repeat seed) as top-level fields, for engines such as llama-server that read a top-level seed; off because OpenAI rejects unknown fields',
    ),
});

// Where attached or spawned servers are found: a NeMo Gym head server, or explicit URLs.
const attachedServers = {
  head_url: urlSchema
    .optional()
    .describe('NeMo Gym head server; server names are resolved through /global_config_dict_yaml'),
  agent_url: urlSchema
    .optional()
    .describe('The agent server (POST /run), instead of resolving the agent through head_url'),
  resources_url: urlSchema
    .optional()
    .describe('The resources server (POST /verify, POST /<tool>), instead of resolving it through head_url'),
};

export const serversSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z
      .literal('embedded')
      .describe('The built-in servers on 127.0.0.1 inside the worker; the policy is a seeded simulator'),
    seed: z.number().int().optional().describe('Simulator seed; defaults to the pipeline seed'),
    faults: faultsConfigSchema
      .optional()
      .describe('Injected faults in front of the simulators, for chaos runs and failure tests'),
  }),
  z.strictObject({ mode: z.literal('attach').describe('Use servers that are already running'), ...attachedServers }),
  z.strictObject({
    mode: z
      .literal('spawn')
      .describe('A worker host starts the server stack (e.g. ng_run) for the run and stops it at the end'),
    ...attachedServers,
    command: z
      .array(z.string().min(1))
      .min(1)
      .describe('argv of the server stack to start on a worker host, e.g. ["ng_run", "+config_paths=[...]"]'),
    cwd: z.string().optional().describe('Working directory of the command, relative to the worker base dir'),
    ready_timeout_s: z
      .number()
      .positive()
      .default(600)
      .describe('How long the servers may take to answer after the command starts'),
  }),
]);
