import { z } from 'zod';
import { toolCallComparatorConfigSchema } from '../gym/verifier';
import { TASK_DATA_VALIDATION_MODES } from '../gym/taskData/reportLines';
import { agentMapSchema, DEFAULT_ROUTE, fanOutSchema, numRepeatsSchema } from '../gym/agentRouting';
import {
  checkEnvironmentRouting,
  environmentRoutingModeSchema,
  environmentServerNameSchema,
  environmentServerRoutesSchema,
} from '../gym/environmentRouting';
import { modelEndpointSchema } from './serversConfig';

// The collect and local-profile blocks of the pipeline config (contracts/config.ts): the two
// chunked stages, and the settings they share.

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

export const collectSchema = z
  .strictObject({
    input_jsonl: z
      .string()
      .min(1)
      .describe('Task rows (NeMo Gym JSONL with responses_create_params), relative to the worker base directory'),
    agent_name: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Agent (responses_api_agents entry) every row runs on, as ng_collect_rollouts 0.7.0's agent_name: it replaces an agent_ref a row has (0.4.0 only filled rows without one); shorthand for agent_map {_default: <agent>}. Without it and agent_map._default, rows run on the agent their agent_ref names",
      ),
    agent_map: agentMapSchema.optional(),
    fan_out: fanOutSchema.optional(),
    num_repeats: numRepeatsSchema.default(1),
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
    retry_terminal_timeouts: z
      .boolean()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option, applied to each rollout's attempts within the run (up to max_attempts) rather than on resume: an agent's failure of class timeout_exceeded, reference_missing, eval_missing or transport_ineligible is retried even when stamped _ng_failure_terminal, skipped never is, any other follows its stamp; off when absent (a failure is terminal iff stamped)",
      ),
    retry_invalid_judge_responses: z
      .boolean()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option, applied within the run rather than on resume: a result with a truthy invalid_judge_response is not a rollout but a failed attempt, written to the failures sidecar as 0.7.0's migration writes it (_ng_failure_class judge_invalid, reuse_cached_deliverable when its deliverables_dir holds a deliverable, _ng_migrated_invalid_judge_response) and retried up to max_attempts, a flagged row's retries posted with reuse_cached_deliverable true so the agent judges that deliverable again; off when absent (it stays a zero-reward rollout)",
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
    require_complete: z
      .boolean()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option: once the collect stage has written its files (rollouts, failures sidecar, profile, aggregate metrics, health checks), fail the run, not retried, when fewer rollouts completed than were materialized; the files are kept; off when absent",
      ),
    dispatch_budget_s: z
      .number()
      .nonnegative()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option: seconds from the collect stage's start during which rollouts may start; then rows in flight finish, rows never started write nothing, the run fails with DispatchBudgetSpent naming the rows left and publishes nothing, and starting it again with the same run id runs those rows (with a budget of its own); unlimited when absent",
      ),
    dispatch_longest_first: z
      .boolean()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option, where pivot-miner resumes: a retried chunk attempt (the run started again with the same run id, e.g. after dispatch_budget_s, or a worker that died) starts the rows whose earlier failed attempts' failures sidecar rows report elapsed_seconds (or response.metadata.elapsed_seconds) first, longest first, then the rest in materialized order; each chunk orders its own rows, chunks start in order; only when rows start changes, not any file; off when absent",
      ),
    drain_margin_s: z
      .number()
      .nonnegative()
      .optional()
      .describe(
        "As ng_collect_rollouts 0.7.0's option: with dispatch_budget_s, start no rollout with fewer than this many seconds of the budget left; when absent, the p75 of the stage's finished requests on that worker once it has 5",
      ),
    environment_routing_mode: environmentRoutingModeSchema,
    environment_server_name: environmentServerNameSchema,
    environment_server_routes: environmentServerRoutesSchema,
    ...chunkingSchema,
  })
  .superRefine((collect, ctx) => {
    // As 0.7.0's config validator: agent_name is agent_map._default, so the two must agree.
    const mapped = collect.agent_map?.[DEFAULT_ROUTE];
    if (collect.agent_name !== undefined && mapped !== undefined && mapped !== collect.agent_name)
      ctx.addIssue({
        code: 'custom',
        path: ['agent_map', DEFAULT_ROUTE],
        message: `agent_name "${collect.agent_name}" conflicts with agent_map._default "${mapped}"; set only one of them`,
      });
    checkEnvironmentRouting(collect, ctx);
  });

export const localProfileSchema = z.strictObject({
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
