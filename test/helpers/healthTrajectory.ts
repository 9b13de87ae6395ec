// Agent answers with the ng_trajectory NeMo Gym 0.7.0's health checks read: one turn naming one
// policy call. A failing status makes the call fail, the turn hollow and its completion empty, so
// the rollout fails four of the single-rollout checks, and a task of such repeats both task checks.

type Row = Record<string, any>;

const POLICY = { type: 'responses_api_models', name: 'policy' };

/** A /run answer for `row` whose one model call answered `status`. */
export function answerWithTrajectory(row: Row, status: number): Row {
  const id = `${row._ng_task_index}-${row._ng_rollout_index}`;
  const failed = status >= 400;
  const taskId = String(row.task_id);
  return {
    response: { output: [], usage: { input_tokens: 3, output_tokens: failed ? 0 : 2 } },
    reward: failed ? 0 : 1,
    ng_trajectory: {
      task_id: taskId,
      rollout_id: id,
      turns: [
        {
          ...{ invocation_id: 'root', task_id: taskId, rollout_id: id, turn_no: 1, timestamp: 1, step_count: 1 },
          answer: failed ? null : 'done',
          model_calls: [{ model_call_id: `call-${id}` }],
        },
      ],
      model_calls: [
        {
          model_call_id: `call-${id}`,
          response_metadata: { model_ref: POLICY, status_code: status, ...(failed ? {} : { response_id: `r-${id}` }) },
          token_stats: { prompt_tokens: 3, completion_tokens: failed ? 0 : 2 },
        },
      ],
    },
  };
}

/** The checks such a task of failing repeats fails, in 0.7.0's order. */
export const FAILED_BY_FAILING_CALLS = [
  'rollout_ended_on_failed_model_call',
  'agent_turn_hollow',
  'model_call_zero_completion_tokens',
  'model_call_failed',
  'task_consistently_unhealthy',
  'task_no_successful_model_calls',
];
