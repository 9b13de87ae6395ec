import { z } from 'zod';

// NeMo Gym 0.7.0's environment routing (rollout_collection.py `_environment_server_for_config_row`):
// which environment server a row is dispatched to. A flat row (NeMo Gym's usual task row) follows
// `environment_routing_mode`: `agent` sends it through its agent's environment server, `legacy` to
// `environment_server_name`, `taskset` refuses it. A materialized taskset row (`task_id.taskset` plus
// `task_input`) is an episode request, routed by `environment_server_routes` in every mode.
// pivot-miner posts rows to agents and mines their responses, so it runs flat rows only: `legacy`
// through a `legacy_agent` relay's agent (gym/environmentServers.ts), and no materialized row.

export const ENVIRONMENT_ROUTING_MODES = ['agent', 'legacy', 'taskset'] as const;

// No zod defaults, as for the other 0.7.0 options: a defaulted key would enter every parsed config
// and so the run manifest's config digest, and a run recorded before the key existed could not resume.
export const environmentRoutingModeSchema = z
  .enum(ENVIRONMENT_ROUTING_MODES)
  .optional()
  .describe(
    "As ng_collect_rollouts 0.7.0's option: agent (also when absent) runs each row on the agent it routes to, a row whose data carries _ng_environment_server through that server (a legacy_agent relay to the row's agent, grouped under it in the aggregate metrics and profile); legacy sends every row through environment_server_name, a legacy_agent relay, stamping it _ng_environment_server and giving a row without agent_ref the relay's agent; taskset is refused: it takes only materialized taskset rows (task_id.taskset + task_input), which pivot-miner cannot run",
  );

export const environmentServerNameSchema = z
  .string()
  .min(1)
  .optional()
  .describe(
    "As ng_collect_rollouts 0.7.0's option: with environment_routing_mode legacy, the environment server (a legacy_agent relay the head server lists) every row goes through; its rollouts are named by it in rollouts_aggregate_metrics.json",
  );

export const environmentServerRoutesSchema = z
  .record(z.string().min(1), z.string().min(1))
  .optional()
  .describe(
    "As ng_collect_rollouts 0.7.0's option: environment servers by the task_id.taskset of materialized taskset rows; accepted for 0.7.0 configs, but such a row is refused (file:line): pivot-miner posts rows to agents, not episode requests to environment servers",
  );

/** NeMo Gym 0.7.0's `is_materialized_task_row`: a `task_id` object beside a `task_input`, valid or not. */
export function isMaterializedTaskRow(row: unknown): row is Record<string, unknown> {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  return isObject(row) && isObject(row.task_id) && 'task_input' in row;
}

/** Why a materialized taskset row cannot run here, as the error naming its file and line says it. */
export function materializedTaskRowRefusal(row: Record<string, unknown>): string {
  const taskset = (row.task_id as Record<string, unknown>).taskset;
  const named = typeof taskset === 'string' && taskset !== '' ? ` "${taskset}"` : '';
  return (
    `a materialized taskset row (task_id.taskset${named} + task_input): NeMo Gym 0.7.0 posts it as an episode ` +
    'request to the environment server environment_server_routes names for its taskset; pivot-miner posts rows ' +
    'to agents and mines their responses, so it cannot run one (docs/nemo-gym.md)'
  );
}

/** The collect keys the environment routing checks read. */
export interface EnvironmentRouting {
  environment_routing_mode?: (typeof ENVIRONMENT_ROUTING_MODES)[number];
  environment_server_name?: string;
  environment_server_routes?: Record<string, string>;
  agent_name?: string;
  agent_map?: Record<string, string>;
  fan_out?: Record<string, string[]>;
}

/**
 * 0.7.0's config checks (`validate_environment_routing`, its messages), then pivot-miner's: `taskset`
 * could run no row here, and under `legacy` the agent options would be ignored, as 0.7.0 ignores
 * them for rows it sends to `environment_server_name`; both are refused rather than run quietly.
 */
export function checkEnvironmentRouting(collect: EnvironmentRouting, ctx: z.RefinementCtx): void {
  const mode = collect.environment_routing_mode;
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (mode === 'legacy' && collect.environment_server_name === undefined)
    issue('environment_server_name', 'environment_server_name is required when environment_routing_mode=legacy');
  if (mode === 'taskset' && Object.keys(collect.environment_server_routes ?? {}).length === 0)
    issue('environment_server_routes', 'environment_server_routes are required when environment_routing_mode=taskset');
  else if (mode === 'taskset')
    issue(
      'environment_routing_mode',
      'taskset routing takes only materialized taskset rows (task_id.taskset + task_input), which pivot-miner cannot run: ' +
        'they are episode requests to an environment server, and pivot-miner posts rows to agents; use agent or legacy',
    );
  if (mode !== 'legacy') return;
  for (const key of ['agent_name', 'agent_map', 'fan_out'] as const)
    if (collect[key] !== undefined)
      issue(
        key,
        `${key} does not apply with environment_routing_mode legacy: every row goes through environment_server_name ` +
          "to its relay's agent (NeMo Gym 0.7.0 ignores it for such rows); remove it",
      );
}
