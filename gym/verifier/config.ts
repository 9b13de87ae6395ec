import { z } from 'zod';

export const parallelToolCallRewardModeSchema = z.enum(['binary_strict', 'fractional', 'f1']);

/**
 * `tool_call_comparator_config` of the resources server, with NeMo Gym's defaults. Unknown keys are
 * dropped rather than rejected because NeMo Gym's pydantic model ignores them too, so a config that
 * loads there loads here.
 */
export const toolCallComparatorConfigSchema = z.object({
  word_count_similarity_threshold: z
    .number()
    .describe('Share of words two free-text strings must have in common to match'),
  floating_point_comparison_threshold: z.number().default(1e-6).describe('Numbers closer than this match'),
  parallel_tool_call_rewarding: z
    .boolean()
    .default(false)
    .describe('Score function_call_batch pivots by matching calls as a set'),
  allow_subset: z
    .boolean()
    .default(false)
    .describe('Batch pivots: a response with only some of the expected calls can match'),
  allow_superset: z.boolean().default(false).describe('Batch pivots: a response with extra calls can match'),
  parallel_tool_call_reward_mode: parallelToolCallRewardModeSchema
    .default('binary_strict')
    .describe("Batch pivots: how matched calls become a reward (as NeMo Gym's resources server)"),
});
export type ToolCallComparatorConfig = z.infer<typeof toolCallComparatorConfigSchema>;
export type ToolCallComparatorConfigInput = z.input<typeof toolCallComparatorConfigSchema>;

/** The config with NeMo Gym's defaults filled in. One that already has every field with the right
 * type (a resources server parses its config once) is used as it is, as zod would return it. */
export function resolveComparatorConfig(config: ToolCallComparatorConfigInput): ToolCallComparatorConfig {
  if (
    typeof config.word_count_similarity_threshold === 'number' &&
    typeof config.floating_point_comparison_threshold === 'number' &&
    typeof config.parallel_tool_call_rewarding === 'boolean' &&
    typeof config.allow_subset === 'boolean' &&
    typeof config.allow_superset === 'boolean' &&
    // Spelled out rather than a Set lookup: this runs once per verified response.
    (config.parallel_tool_call_reward_mode === 'binary_strict' ||
      config.parallel_tool_call_reward_mode === 'fractional' ||
      config.parallel_tool_call_reward_mode === 'f1')
  ) {
    return config as ToolCallComparatorConfig;
  }
  return toolCallComparatorConfigSchema.parse(config);
}
