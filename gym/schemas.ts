import { z } from 'zod';

// Shapes shared across NeMo Gym boundaries. Rows are open objects (`looseObject`) because NeMo Gym
// passes every extra field of a row through untouched, and so must we.

export const agentRefSchema = z.looseObject({
  type: z.string().optional(),
  name: z.string().min(1),
});
export type AgentRef = z.infer<typeof agentRefSchema>;

/** An OpenAI Responses `create` request as NeMo Gym stores it under `responses_create_params`. */
export const responsesCreateParamsSchema = z.looseObject({
  input: z.union([z.string(), z.array(z.looseObject({}))]),
  tools: z.array(z.looseObject({})).nullish(),
});
export type ResponsesCreateParams = z.infer<typeof responsesCreateParamsSchema>;

/** A task row: what `ng_collect_rollouts` reads. */
export const taskRowSchema = z.looseObject({
  responses_create_params: responsesCreateParamsSchema,
  agent_ref: agentRefSchema.optional(),
  _ng_task_index: z.number().int().nonnegative().optional(),
  _ng_rollout_index: z.number().int().nonnegative().optional(),
});
export type TaskRow = z.infer<typeof taskRowSchema>;

/** A materialized input row: a task row after `num_repeats` expansion, keyed by task and rollout. */
export const materializedRowSchema = taskRowSchema.extend({
  agent_ref: agentRefSchema,
  _ng_task_index: z.number().int().nonnegative(),
  _ng_rollout_index: z.number().int().nonnegative(),
});
export type MaterializedRow = z.infer<typeof materializedRowSchema>;

// Each action's `type` comes out as the program's own constant rather than the string the JSON held:
// an equal but separate string compares character by character, and the verifier compares an
// expected action's type on every response it checks.
export const functionCallActionSchema = z.object({
  type: z.literal('function_call').overwrite(() => 'function_call'),
  name: z.string(),
  arguments: z.string(),
});
export const messageActionSchema = z.object({
  type: z.literal('message').overwrite(() => 'message'),
  content: z.string(),
});
export const functionCallBatchActionSchema = z.object({
  type: z.literal('function_call_batch').overwrite(() => 'function_call_batch'),
  calls: z.array(functionCallActionSchema).min(1),
});
/** `expected_action` of a pivot row (single_step_tool_use_with_argument_comparison). */
export const expectedActionSchema = z.discriminatedUnion('type', [
  functionCallActionSchema,
  messageActionSchema,
  functionCallBatchActionSchema,
]);
export type ExpectedAction = z.infer<typeof expectedActionSchema>;

/** One completed rollout line as NeMo Gym writes it: the agent's result plus the rollout key. */
export const rolloutResultSchema = z.looseObject({
  response: z.looseObject({ output: z.array(z.unknown()) }),
  reward: z.number(),
  _ng_task_index: z.number().int().nonnegative(),
  _ng_rollout_index: z.number().int().nonnegative(),
});
export type RolloutResult = z.infer<typeof rolloutResultSchema>;
