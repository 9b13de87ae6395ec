// NeMo Gym 0.7.0's rollout health checks (nemo_gym/health): each check's id, whether it judges one
// rollout or one task's repeats, and the evidence it needs. A check whose evidence a record lacks
// is `unobserved` for that record rather than passed. The order is 0.7.0's: the summary lists the
// checks in it.

export type CheckInput =
  | 'record'
  | 'trajectory'
  | 'agent_turns'
  | 'bound_calls'
  | 'owned_model_calls'
  | 'observed_model_calls'
  | 'repeat_verdicts'
  | 'repeat_digests';

export interface CheckSpec {
  id: string;
  scope: 'rollout' | 'task';
  reads: readonly CheckInput[];
}

const TRAJECTORY: readonly CheckInput[] = ['record', 'trajectory'];

export const CHECK_REGISTRY = [
  { id: 'check_execution_error', scope: 'rollout', reads: ['record'] },
  { id: 'record_unreadable', scope: 'rollout', reads: ['record'] },
  { id: 'rollout_duplicate_identity', scope: 'rollout', reads: ['record'] },
  { id: 'rollout_missing_agent_turns', scope: 'rollout', reads: [...TRAJECTORY, 'agent_turns'] },
  { id: 'rollout_ended_on_failed_model_call', scope: 'rollout', reads: [...TRAJECTORY, 'observed_model_calls'] },
  { id: 'agent_turn_hollow', scope: 'rollout', reads: [...TRAJECTORY, 'agent_turns'] },
  { id: 'model_call_zero_completion_tokens', scope: 'rollout', reads: [...TRAJECTORY, 'owned_model_calls'] },
  { id: 'model_call_missing_token_counts', scope: 'rollout', reads: [...TRAJECTORY, 'owned_model_calls'] },
  { id: 'trajectory_capture_mismatch', scope: 'rollout', reads: [...TRAJECTORY, 'owned_model_calls'] },
  { id: 'model_call_failed', scope: 'rollout', reads: [...TRAJECTORY, 'owned_model_calls'] },
  { id: 'rollout_token_count_mismatch', scope: 'rollout', reads: [...TRAJECTORY, 'bound_calls'] },
  { id: 'model_call_runaway_generation', scope: 'rollout', reads: [...TRAJECTORY, 'owned_model_calls'] },
  { id: 'task_consistently_unhealthy', scope: 'task', reads: ['repeat_verdicts'] },
  { id: 'task_no_successful_model_calls', scope: 'task', reads: ['repeat_digests'] },
] as const satisfies readonly CheckSpec[];

export type CheckId = (typeof CHECK_REGISTRY)[number]['id'];

export const CHECK_IDS = CHECK_REGISTRY.map((spec) => spec.id) as [CheckId, ...CheckId[]];

export const ROLLOUT_SPECS: readonly CheckSpec[] = CHECK_REGISTRY.filter((spec) => spec.scope === 'rollout');

/** 0.7.0's health report files, written beside the rollouts they judge. */
export const QUALITY_SUMMARY_SUFFIX = '_quality_summary.json';
export const ROLLOUT_VERDICTS_SUFFIX = '_rollout_verdicts.jsonl';
