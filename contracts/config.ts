import { z } from 'zod';
import { toolCallComparatorConfigSchema } from '../gym/verifier';
import { faultsConfigSchema } from './faultsConfig';

// The pipeline config users write. Snake_case because it is YAML people edit next to NeMo Gym
// configs; strict objects so a misspelt key is an error instead of a silently ignored setting.

const urlSchema = z.url({ protocol: /^https?$/ });

const modelEndpointSchema = z.strictObject({
  url: urlSchema.optional().describe('Base URL serving /v1/responses or /v1/chat/completions; omitted = the embedded simulator'),
  api: z.enum(['responses', 'chat_completions']).default('responses'),
  model: z.string().optional(),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe('Name of the worker environment variable holding the API key; the key itself never enters a config'),
  timeout_ms: z.number().int().positive().default(120_000),
  max_concurrency: z.number().int().positive().default(16),
  unpack_extra_body: z
    .boolean()
    .default(false)
    .describe('api responses only: also send metadata.extra_body keys (the per-repeat seed) as top-level fields, for engines such as llama-server that read a top-level seed; off because OpenAI rejects unknown fields'),
});

// Where attached or spawned servers are found: a NeMo Gym head server, or explicit URLs.
const attachedServers = {
  head_url: urlSchema.optional().describe('NeMo Gym head server; server names are resolved through /global_config_dict_yaml'),
  agent_url: urlSchema.optional(),
  resources_url: urlSchema.optional(),
};

const serversSchema = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('embedded'),
    seed: z.number().int().optional().describe('Simulator seed; defaults to the pipeline seed'),
    faults: faultsConfigSchema.optional().describe('Injected faults in front of the simulators, for chaos runs and failure tests'),
  }),
  z.strictObject({ mode: z.literal('attach'), ...attachedServers }),
  z.strictObject({
    mode: z.literal('spawn'),
    ...attachedServers,
    command: z
      .array(z.string().min(1))
      .min(1)
      .describe('argv of the server stack to start on a worker host, e.g. ["ng_run", "+config_paths=[...]"]'),
    cwd: z.string().optional().describe('Working directory of the command, relative to the worker base dir'),
    ready_timeout_s: z.number().positive().default(600).describe('How long the servers may take to answer after the command starts'),
  }),
]);

const chunkingSchema = {
  chunk_size: z.number().int().positive().default(128),
  max_chunks_in_flight: z.number().int().positive().default(4),
  max_concurrency: z.number().int().positive().default(16).describe('Requests in flight from one worker process to one server; the chunks it runs share them'),
  max_attempts: z.number().int().positive().default(3),
  request_timeout_ms: z.number().int().positive().default(300_000),
};

const collectSchema = z.strictObject({
  input_jsonl: z.string().min(1),
  agent_name: z.string().min(1),
  num_repeats: z.number().int().positive().default(1),
  seed_per_repeat: z.boolean().default(true),
  responses_create_params: z.record(z.string(), z.unknown()).default({}),
  limit: z.number().int().positive().optional(),
  ...chunkingSchema,
});

const localProfileSchema = z.strictObject({
  num_samples: z.number().int().min(2).default(8),
  verifier: z
    .enum(['builtin', 'nemo_gym_agent'])
    .default('builtin')
    .describe(
      'builtin: one call to local_profile.model, scored by our port of NeMo Gym\'s argument-comparison verifier. ' +
        'nemo_gym_agent: each sample is a /run of local_profile.agent_name on the NeMo Gym servers (servers.head_url), ' +
        'so pass rates come from the NeMo Gym version that will train on them; local_profile.model is then not called',
    ),
  agent_name: z
    .string()
    .min(1)
    .optional()
    .describe('With verifier nemo_gym_agent: the NeMo Gym agent that runs and verifies the pivots; defaults to the published agent name'),
  model: modelEndpointSchema.prefault({}),
  responses_create_params: z.record(z.string(), z.unknown()).default({}),
  // NeMo Gym requires the threshold; 0.1 is what its pivot configs ship with.
  tool_call_comparator_config: toolCallComparatorConfigSchema.prefault({ word_count_similarity_threshold: 0.1 }),
  ...chunkingSchema,
});

export const pipelineConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._-]+$/),
  seed: z.number().int().default(0),
  artifacts_root: z.string().default('artifacts'),
  servers: serversSchema.default({ mode: 'embedded' }),
  collect: collectSchema,
  profile: z.strictObject({ allow_partial_rollouts: z.boolean().default(false) }).prefault({}),
  convert: z
    .strictObject({
      min_source_reward: z.number().default(1.0),
      source_preference: z.enum(['prefer_mixed', 'require_mixed', 'off']).default('prefer_mixed'),
      batch_pivots: z.boolean().default(false),
      keep_reasoning: z.boolean().default(false),
    })
    .prefault({}),
  local_profile: localProfileSchema.prefault({}),
  filter: z
    .strictObject({
      max_pivots: z.number().int().positive().optional(),
      allow_partial: z.boolean().default(false),
    })
    .prefault({}),
  pool: z
    .strictObject({
      dir: z.string().min(1).optional().describe('Pivot pool directory, relative to artifacts_root; defaults to pools/<name>'),
      sources: z
        .array(z.string().min(1))
        .default([])
        .describe('Globs of NeMo Gym rollouts files that nightly mining consumes, relative to the worker base directory'),
    })
    .prefault({}),
  publish: z
    .strictObject({
      dataset_name: z.string().regex(/^[A-Za-z0-9._-]+$/).optional(),
      agent_name: z.string().min(1).optional().describe('agent_ref.name of published pivots; defaults to <name>_pivot_agent'),
      resources_server_name: z.string().min(1).optional(),
      model_server_name: z.string().min(1).default('policy_model'),
    })
    .prefault({}),
});
export type PipelineConfig = z.infer<typeof pipelineConfigSchema>;

/** Formats zod issues as `file: key.path: message`, one per line, so a user can find the line to fix. */
export function describeIssues(file: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => `${file}: ${issue.path.length ? issue.path.join('.') : '(top level)'}: ${issue.message}`)
    .join('\n');
}

