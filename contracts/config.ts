import { z } from 'zod';
import { maxShareSchema } from '../gym/actionMix';
import { CHECK_IDS } from '../gym/health/registry';
import { serversSchema } from './serversConfig';
import { collectSchema, localProfileSchema } from './stageConfig';

// The pipeline config users write. Snake_case because it is YAML people edit next to NeMo Gym
// configs; strict objects so a misspelt key is an error instead of a silently ignored setting.
// Its servers block is in serversConfig.ts, its two chunked stages in stageConfig.ts.

export { modelUrlSchema } from './serversConfig';

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
          "Whose ng_reward_profile and aggregate metrics files each stage writes: 0.7.0's (repeat-level " +
            'metrics, across-repeats aggregates, mask_sample exclusion and coverage, fan-out tasks per agent, ' +
            "aggregate metrics entries named by their environment server) or 0.4.0's",
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
