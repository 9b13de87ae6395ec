import { z } from 'zod';
import { toolCallComparatorConfigSchema } from '../gym/verifier';
import { maxShareSchema } from '../gym/actionMix';
import { TASK_DATA_VALIDATION_MODES } from '../gym/taskData/reportLines';
import { faultsConfigSchema } from './faultsConfig';
import { CHECK_IDS } from '../gym/health/registry';

// The pipeline config users write. Snake_case because it is YAML people edit next to NeMo Gym
// configs; strict objects so a misspelt key is an error instead of a silently ignored setting.

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

const modelEndpointSchema = z.strictObject({
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

const serversSchema = z.discriminatedUnion('mode', [
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

const chunkingSchema = {
  // Each chunk costs an activity (and a share of a merge) on the Temporal server and the worker,
  // tens of CPU-ms apiece, while a retried chunk runs only its rows not done yet: at 128 that cost
  // was a third of the collector's CPU per rollout in the peer bench (docs/performance.md).
  chunk_size: z
    .number()
    .int()
    .positive()
    .default(512)
    .describe(
      'Rows of the materialized file per chunk activity (one retry unit, one shard file); each chunk costs Temporal an activity, so smaller chunks cost more CPU per rollout',
    ),
  max_chunks_in_flight: z
    .number()
    .int()
    .positive()
    .default(4)
    .describe(
      'Chunk activities the workflow keeps running at once, over all workers; at least workers × 2 keeps every worker busy',
    ),
  max_concurrency: z
    .number()
    .int()
    .positive()
    .default(16)
    .describe('Requests in flight from one worker process to one server; the chunks it runs share them'),
  max_attempts: z
    .number()
    .int()
    .positive()
    .default(3)
    .describe('Attempts per rollout (HTTP 429, 5xx, timeouts) before it goes to the failures file'),
  request_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(300_000)
    .describe('Timeout of one request to the agent (or to the model, with the builtin verifier), in milliseconds'),
};

const collectSchema = z.strictObject({
  input_jsonl: z
    .string()
    .min(1)
    .describe('Task rows (NeMo Gym JSONL with responses_create_params), relative to the worker base directory'),
  agent_name: z.string().min(1).describe('Agent (responses_api_agents entry) for rows without agent_ref'),
  num_repeats: z
    .number()
    .int()
    .positive()
    .default(1)
    .describe('Rollouts per task row, as ng_collect_rollouts num_repeats'),
  seed_per_repeat: z
    .boolean()
    .default(true)
    .describe('Put {"seed": i} for repeat i in responses_create_params.metadata.extra_body'),
  responses_create_params: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Merged into every row's responses_create_params (e.g. temperature, max_output_tokens)"),
  limit: z.number().int().positive().optional().describe('Use only the first N task rows'),
  task_data_schema: z
    .string()
    .min(1)
    .optional()
    .describe(
      "JSON Schema of the task data of the rows' resources server, as NeMo Gym 0.7.0's `gym env schema` prints it; relative to the worker base directory. Without it rows are not validated",
    ),
  // No zod default: a defaulted key would enter every parsed config, and so the run manifest's
  // config digest, and a run recorded before the key existed could not resume.
  task_data_validation: z
    .enum(TASK_DATA_VALIDATION_MODES)
    .optional()
    .describe(
      "As ng_prepare_data's option: check and run validate the rows against task_data_schema; warn lists findings as notes, error refuses the run, off skips; auto (when absent too) is warn (0.7.0's train_preparation)",
    ),
  // 0.7.0's collection options take no zod default either, for the same reason.
  interleave_repeats: z
    .boolean()
    .optional()
    .describe(
      "As ng_collect_rollouts 0.7.0's option: materialize and run the repeats round by round (abcabc) instead of each task's back to back (aabbcc), spreading a task's repeats over the run; off when absent",
    ),
  route_failures_to_sidecar: z
    .boolean()
    .optional()
    .describe(
      "As ng_collect_rollouts 0.7.0's option, for the sidecar's rows: a failed request to the agent is written as 0.7.0 writes it (_ng_failure_class agent_run_error, or agent_request_failed for 429, 502-504 and no answer; _ng_failure_type, _ng_failure_message, _ng_failure_http_status, _ng_failure_response_body) instead of pivot-miner's attempt, failure_class and error; collection goes on either way",
    ),
  count_failure_classes_as_zero: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "As ng_collect_rollouts 0.7.0's option: failures sidecar rows whose last attempt has one of these _ng_failure_class values (an agent's own, e.g. agent_run_error) enter rollouts_aggregate_metrics.json, scored zero unless they carry a reward; no rollout file changes",
    ),
  count_missing_rollouts_as_zero: z
    .boolean()
    .optional()
    .describe(
      "As ng_collect_rollouts 0.7.0's option: a materialized rollout that left no row (neither in rollouts.jsonl nor in the failures sidecar, e.g. an agent's _ng_no_persist result) enters rollouts_aggregate_metrics.json as a zero reward; no rollout file changes; off when absent",
    ),
  ...chunkingSchema,
});

const localProfileSchema = z.strictObject({
  num_samples: z.number().int().min(2).default(8).describe('K: on-policy samples per pivot candidate'),
  verifier: z
    .enum(['builtin', 'nemo_gym_agent'])
    .default('builtin')
    .describe(
      "builtin: one call to local_profile.model, scored by our port of NeMo Gym's argument-comparison verifier. " +
        'nemo_gym_agent: each sample is a /run of local_profile.agent_name on the NeMo Gym servers (servers.head_url), ' +
        'so pass rates come from the NeMo Gym version that will train on them; local_profile.model is then not called',
    ),
  agent_name: z
    .string()
    .min(1)
    .optional()
    .describe(
      'With verifier nemo_gym_agent: the NeMo Gym agent that runs and verifies the pivots; defaults to the published agent name',
    ),
  model: modelEndpointSchema.prefault({}).describe('The policy that samples each pivot (with verifier builtin)'),
  responses_create_params: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Merged into every pivot row's responses_create_params before sampling"),
  // NeMo Gym requires the threshold; 0.1 is what its pivot configs ship with.
  tool_call_comparator_config: toolCallComparatorConfigSchema
    .prefault({ word_count_similarity_threshold: 0.1 })
    .describe('How a sampled action is compared with the expected one; also written into the published Gym config'),
  ...chunkingSchema,
});

export const pipelineConfigSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .describe('Pipeline name; default dataset, agent and pool names derive from it'),
  seed: z.number().int().default(0).describe('Seed of the run: per-repeat seeds and the embedded simulator'),
  artifacts_root: z
    .string()
    .default('artifacts')
    .describe(
      'Where runs/<run_id>/ directories go, inside the worker base directory unless PIVOT_MINER_ARTIFACTS_ROOT is set',
    ),
  servers: serversSchema
    .default({ mode: 'embedded' })
    .describe('Where the agent, resources and model servers come from'),
  collect: collectSchema.describe(
    "Collect: task rows × num_repeats through the agent → rollouts.jsonl. Which of ng_collect_rollouts 0.7.0's options it follows, and which do not apply (retain_results_in_memory: every stage streams to durable shards), is in docs/nemo-gym.md",
  ),
  profile: z
    .strictObject({
      allow_partial_rollouts: z
        .boolean()
        .default(false)
        .describe('Profile tasks with missing rollouts instead of failing (ng_reward_profile partial mode)'),
      nemo_gym_version: z
        .enum(['0.7.0', '0.4.0'])
        .default('0.7.0')
        .describe(
          "Whose ng_reward_profile files each stage writes: 0.7.0's (repeat-level metrics, across-repeats " +
            "aggregates, mask_sample exclusion and coverage, fan-out tasks per agent) or 0.4.0's",
        ),
    })
    .prefault({})
    .describe('Reward profile of the collected rollouts'),
  // The health keys take no zod default: a defaulted key would enter every parsed config, and so
  // the run manifest's config digest, and a run recorded before the key existed could not resume.
  disable_health_check: z
    .boolean()
    .optional()
    .describe(
      "Skip NeMo Gym 0.7.0's rollout health checks on each stage's merged rollouts, as its disable_health_check",
    ),
  health_check_ignored_checks: z
    .union([
      z.array(z.enum(CHECK_IDS)),
      // 0.7.0 also takes one comma-separated string, as a Hydra override writes it.
      z
        .string()
        .transform((ids) => [...new Set(ids.split(',').map((id) => id.trim()))].filter((id) => id !== ''))
        .pipe(z.array(z.enum(CHECK_IDS))),
    ])
    .optional()
    .describe(
      'Health checks neither run nor counted, by the ids 0.7.0 names them (a list, or one comma-separated string), as its health_check_ignored_checks',
    ),
  health_check_stops_run: z
    .boolean()
    .optional()
    .describe(
      "Stop the run (not retried) when a health check finds anything in a stage's rollouts, after the stage's files are published; off as in 0.7.0, which only reports",
    ),
  convert: z
    .strictObject({
      min_source_reward: z
        .number()
        .default(1.0)
        .describe('A trajectory is a clean positive source at this reward or above'),
      source_preference: z
        .enum(['prefer_mixed', 'require_mixed', 'off'])
        .default('prefer_mixed')
        .describe(
          'prefer_mixed: trajectories of tasks with mixed rewards first; require_mixed: only those; off: input order',
        ),
      batch_pivots: z
        .boolean()
        .default(false)
        .describe('Turn turns with several tool calls into function_call_batch pivots instead of skipping them'),
      keep_reasoning: z.boolean().default(false).describe("Keep reasoning items in a pivot's input prefix"),
    })
    .prefault({})
    .describe('Cutting clean positive trajectories into pivot candidates'),
  local_profile: localProfileSchema.prefault({}).describe('Local profiling: K samples per candidate, each verified'),
  overlap: z
    .boolean()
    .default(true)
    .describe(
      'Start local profiling while collection runs: the rows of finished chunks are cut off (at whole tasks when convert.source_preference is require_mixed), converted and sampled early, and the samples reused, so the published files equal a sequential run (false) byte for byte; verifier builtin only',
    ),
  overlap_stall_s: z
    .number()
    .positive()
    .optional()
    .describe(
      'With overlap: once the run waits on early profiling, how long it may go without profiling a segment before the run cancels it and samples live what it did not file (default 7200)',
    ),
  filter: z
    .strictObject({
      max_pivots: z
        .number()
        .int()
        .positive()
        .optional()
        .describe(
          'Publish at most N mixed pivots, dropping the easiest (highest pass rate) first; applies after max_pass_rate',
        ),
      max_pass_rate: z
        .number()
        .gt(0)
        .lte(1)
        .optional()
        .describe(
          "The paper's difficulty ceiling λ_diff (PivotRL, arXiv 2603.21383): publish a pivot only if 0 < local pass rate < max_pass_rate; unset keeps every mixed pivot",
        ),
      max_share: maxShareSchema
        .optional()
        .describe(
          'Largest share of the published pivots per expected-action kind (message, function_call, function_call_batch), e.g. {message: 0.2}; an over-represented kind loses its easiest pivots first, after the budget, on each side of the split',
        ),
      allow_partial: z
        .boolean()
        .default(false)
        .describe(
          'Classify candidates with missing samples on the samples that succeeded, instead of holding them back as incomplete; a pivot published so is marked provenance.local_partial',
        ),
    })
    .prefault({})
    .describe('Keeping mixed-reward pivots: below the pass-rate ceiling, by the budget, by the action mix'),
  pool: z
    .strictObject({
      dir: z
        .string()
        .min(1)
        .optional()
        .describe('Pivot pool directory, relative to artifacts_root; defaults to pools/<name>'),
      sources: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'Globs of NeMo Gym rollouts files that nightly mining consumes, relative to the worker base directory',
        ),
    })
    .prefault({})
    .describe('The versioned pivot pool of nightly mining and the curriculum'),
  publish: z
    .strictObject({
      dataset_name: z
        .string()
        .regex(/^[A-Za-z0-9._-]+$/)
        .optional()
        .describe('Name of the published dataset; defaults to name'),
      agent_name: z
        .string()
        .min(1)
        .optional()
        .describe('agent_ref.name of published pivots; defaults to <name>_pivot_agent'),
      resources_server_name: z
        .string()
        .min(1)
        .optional()
        .describe('Resources server name in the Gym config; derived from the agent name by default'),
      model_server_name: z
        .string()
        .min(1)
        .default('policy_model')
        .describe("Model server the generated Gym config's agent refers to"),
      validation_fraction: z
        .number()
        .min(0)
        .max(0.5)
        .default(0)
        .describe(
          'Expected share of source trajectories (source file, task index, rollout index; trajectories sharing a deduplicated pivot count as one) whose pivots go to dataset/pivots_validation.jsonl, listed in the Gym config as a type: validation dataset; 0 publishes train only',
        ),
      validation_seed: z
        .number()
        .int()
        .optional()
        .describe('Seed of the validation split; defaults to the pipeline seed'),
    })
    .prefault({})
    .describe('The dataset, Gym config YAML, metrics and report'),
});
export type PipelineConfig = z.infer<typeof pipelineConfigSchema>;

/** Formats zod issues as `file: key.path: message`, one per line, so a user can find the line to fix. */
export function describeIssues(file: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => `${file}: ${issue.path.length ? issue.path.join('.') : '(top level)'}: ${issue.message}`)
    .join('\n');
}
