import { z } from 'zod';

// The `ng_trajectory` a NeMo Gym 0.7.0 rollout may carry (rollout_observability.TrajectoryRecord),
// as its health checks read it: validated as 0.7.0 validates it (unknown keys refused, counts not
// negative, ids unique), because a trajectory 0.7.0 cannot read makes the record unreadable and
// every check on it unobserved. A model reference keeps only its type and name, as 0.7.0's keeps.

const text = z.string().nullish();
const count = z.number().int().min(0).nullish();
const seconds = z.number().nullish();
const millis = z.number().min(0).nullish();

const modelServerRef = z.object({ type: z.literal('responses_api_models'), name: z.string() });

const modelCallRef = z
  .strictObject({ model_call_id: text, model_ref: modelServerRef.nullish(), response_id: text })
  .refine((ref) => Boolean(ref.model_call_id) || (ref.model_ref != null && Boolean(ref.response_id)), {
    message: 'model_call_id or both model_ref and response_id are required',
  });

const modelCall = z.strictObject({
  model_call_id: text,
  started_at: seconds,
  completed_at: seconds,
  duration_ms: millis,
  request: z.unknown().optional(),
  response: z.unknown().optional(),
  response_metadata: z
    .strictObject({
      response_id: text,
      model_ref: modelServerRef.nullish(),
      model: text,
      dialect: text,
      status_code: z.number().int().nullish(),
      response_status: text,
      finish_reason: text,
      upstream_attempted: z.boolean().nullish(),
      response_source: z.enum(['upstream', 'local']).nullish(),
      upstream_status_code: z.number().int().nullish(),
      local_response_reason: text,
      error_category: text,
      latency_ttft_ms: millis,
    })
    .optional(),
  token_stats: z
    .strictObject({
      prompt_tokens: count,
      completion_tokens: count,
      reasoning_tokens: count,
      total_tokens: count,
      cached_tokens: count,
    })
    .optional(),
});

const turn = z.strictObject({
  invocation_id: z.string(),
  task_id: z.string(),
  rollout_id: z.string(),
  turn_no: z.number().int().min(1),
  timestamp: z.number(),
  question: z.unknown().optional(),
  answer: z.unknown().optional(),
  reasoning_content: z.unknown().optional(),
  resolved: z.boolean().nullish(),
  step_count: z.number().int().min(0),
  model_calls: z.array(modelCallRef).optional(),
});

const invocation = z.strictObject({
  kind: z.literal('agent_invocation').optional(),
  invocation_id: z.string(),
  parent_invocation_id: text,
  spawned_by_tool_call_id: text,
  status: z.enum(['completed', 'failed', 'incomplete', 'unknown']).optional(),
  duration_ms: millis,
  error_type: text,
  model_calls: z.array(modelCallRef).optional(),
  conversation: z.array(z.record(z.string(), z.unknown())).optional(),
});

const toolCall = z
  .strictObject({
    kind: z.literal('tool_call').optional(),
    invocation_id: z.string(),
    tool_call_id: z.string(),
    sandbox_id: text,
    tool_name: text,
    started_at: seconds,
    completed_at: seconds,
    duration_ms: millis,
    timing_source: z.enum(['executor', 'artifact', 'harness']).nullish(),
    status: z.enum(['completed', 'failed', 'timeout', 'cancelled', 'incomplete', 'unknown']).optional(),
    error_type: text,
    output: z.unknown().optional(),
  })
  .refine((call) => call.started_at == null || call.completed_at == null || call.completed_at >= call.started_at, {
    message: 'completed_at must not precede started_at',
  });

const gap = z.strictObject({ code: z.string(), invocation_id: text, detail: text });

function unique<T>(values: readonly T[]): boolean {
  return new Set(values).size === values.length;
}

export const trajectorySchema = z
  .strictObject({
    schema_version: z.literal('1.0').optional(),
    task_id: z.string(),
    rollout_id: z.string(),
    invocations: z.array(invocation).default([]),
    turns: z.array(turn).default([]),
    model_calls: z.array(modelCall).default([]),
    tool_calls: z.array(toolCall).optional(),
    gaps: z.array(gap).default([]),
  })
  .refine((t) => unique(t.invocations.map((i) => i.invocation_id)), 'invocation_id must be unique')
  .refine((t) => unique(t.model_calls.flatMap((c) => (c.model_call_id ? [c.model_call_id] : []))), 'model_call_id')
  .refine((t) => t.turns.every((u) => u.task_id === t.task_id && u.rollout_id === t.rollout_id), 'turn identity')
  .refine((t) => unique(t.turns.map((u) => JSON.stringify([u.invocation_id, u.turn_no]))), 'turn number');

export type Trajectory = z.infer<typeof trajectorySchema>;
export type TrajectoryTurn = Trajectory['turns'][number];
export type ModelCallRef = z.infer<typeof modelCallRef>;
export type ModelServerRef = z.infer<typeof modelServerRef>;

/** The record's trajectory, none, or the name of the error 0.7.0 reports when it cannot read one. */
export function canonicalTrajectory(record: Record<string, unknown>): { trajectory?: Trajectory; error?: string } {
  const raw = record.ng_trajectory;
  if (raw === undefined || raw === null) return {};
  const parsed = trajectorySchema.safeParse(raw);
  return parsed.success ? { trajectory: parsed.data } : { error: 'ValidationError' };
}

export function hasGap(trajectory: Trajectory, codes: ReadonlySet<string>): boolean {
  return trajectory.gaps.some((g) => codes.has(g.code));
}
