import { z } from 'zod';
import { JsonlError } from './errors';

// Which agent each task row runs on, and how many times, as NeMo Gym 0.7.0's rollout collection
// decides at materialization (`RolloutCollectionHelper._preprocess_raw_rows`): `agent_map` re-routes
// rows by the name they route by, `fan_out` runs a row once per listed agent, and `num_repeats` may
// differ per agent. NeMo Gym 0.4.0 had none of these: its `agent_name` only filled rows missing an
// `agent_ref`, which is what `agent_name` still does here when no `agent_map` is given.

/** The key of `agent_map`, `fan_out` and a `num_repeats` dict that applies to rows no other key names. */
export const DEFAULT_ROUTE = '_default';

const routeName = z.string().min(1);

export const agentMapSchema = z
  .record(routeName, routeName)
  .describe(
    "As ng_collect_rollouts 0.7.0's option: re-routes rows by their agent_ref.name or, failing that, task_source (e.g. {old_agent: new_agent}); _default applies to every row no other key names, including rows without agent_ref. A re-routed row's agent_ref becomes {name: <agent>}",
  );

export const fanOutSchema = z
  .record(routeName, z.array(routeName))
  .superRefine((fanOut, ctx) => {
    for (const [key, agents] of Object.entries(fanOut)) {
      if (agents.length === 0)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `fan_out[${key}] is an empty list, which would drop every matching row; remove the key or list at least one agent`,
        });
      const duplicates = [...new Set(agents.filter((a, i) => agents.indexOf(a) !== i))].sort();
      if (duplicates.length > 0)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `fan_out[${key}] lists the same agent more than once (${duplicates.join(', ')}); use num_repeats for repetition`,
        });
    }
  })
  .describe(
    "As ng_collect_rollouts 0.7.0's option: runs each row whose agent_ref.name (or task_source) is a key once per listed agent, each copy with its own rollout index; composes with num_repeats (repeats apply per agent)",
  );

export const numRepeatsSchema = z
  .union([z.number().int().min(1), z.record(routeName, z.number().int().min(1))], {
    error: 'expected an integer >= 1, or a dict of agent or routing key to an integer >= 1',
  })
  .describe(
    "Rollouts per task row, as ng_collect_rollouts num_repeats: a number for every row, or (0.7.0) a dict keyed by the agent a row is dispatched to or the row's own agent_ref.name / task_source, the dispatched agent first, with _default for rows no key names; a row no key names is refused",
  );

export type AgentMap = z.infer<typeof agentMapSchema>;
export type FanOut = z.infer<typeof fanOutSchema>;
export type NumRepeats = z.infer<typeof numRepeatsSchema>;

export interface RoutingOptions {
  /** NeMo Gym 0.4.0's: the agent of rows without `agent_ref`; ignored when `agent_map` is given. */
  agent_name?: string;
  agent_map?: AgentMap;
  fan_out?: FanOut;
  num_repeats: NumRepeats;
  /** 0.7.0's `environment_routing_mode: legacy`: every row through this relay to its agent; agent_map and fan_out do not apply. */
  legacy_environment_server?: LegacyEnvironmentServer;
}

/** A `legacy_agent` environment server and the agent it relays to. */
export interface LegacyEnvironmentServer {
  name: string;
  agent: string;
}

/** The copies a row runs as: one per dispatched agent, each repeated `repeats` times. */
export interface Dispatch {
  agent: string;
  repeats: number;
}

/** What a row becomes: the `agent_ref` written over its own (or added) before its copies are made, and its copies. */
export interface RowRoute {
  /** A new `agent_ref` for the row, set before `_ng_task_index` (in place when the row has one). */
  agentRef?: { name: string };
  /** In order. A copy whose agent is not the row's (fan-out) gets `{name: <agent>}`, after `_ng_task_index` when the row had no agent_ref. */
  dispatches: Dispatch[];
  /** `_ng_environment_server`, set after `_ng_task_index` (legacy routing). */
  environmentServer?: string;
  /** An `agent_ref` each copy gets after `_ng_rollout_index`: legacy routing fills a row without one last. */
  lateAgentRef?: { name: string };
  /** The row's own agent and the one `agent_map` put in its place, when they differ. */
  overridden?: [from: string, to: string];
  /** The `num_repeats` keys the row's copies were looked up by (0.7.0's `agents_seen`). */
  repeatKeys: string[];
}

function entry<T>(dict: Record<string, T> | undefined, key: string | undefined): T | undefined {
  return dict !== undefined && key !== undefined && Object.hasOwn(dict, key) ? dict[key] : undefined;
}

/** The keys a copy's `num_repeats` is looked up by: the dispatched agent, then the row's routing key. */
function repeatKeysOf(agent: string | undefined, basis: string | undefined): string[] {
  return [...new Set([agent, basis])].filter((k): k is string => k !== undefined);
}

/** The rollouts one copy runs: the dispatched agent's entry, else the row's routing key's, else `_default`. */
function repeatsOf(
  opts: RoutingOptions,
  agent: string | undefined,
  basis: string | undefined,
  file: string,
  line: number,
): number {
  if (typeof opts.num_repeats === 'number') return opts.num_repeats;
  const keys = repeatKeysOf(agent, basis);
  const perAgent = Object.fromEntries(Object.entries(opts.num_repeats).filter(([k]) => k !== DEFAULT_ROUTE));
  for (const key of keys) {
    const repeats = entry(perAgent, key);
    if (repeats !== undefined) return repeats;
  }
  const fallback = entry(opts.num_repeats, DEFAULT_ROUTE);
  if (fallback !== undefined) return fallback;
  throw new JsonlError(
    file,
    line,
    `num_repeats has no entry for routing key ${keys.join(' / ')} and no ${DEFAULT_ROUTE} (keys: ${Object.keys(perAgent).sort().join(', ')})`,
  );
}

/**
 * The route of one row, as 0.7.0 gives it. The routing key is the row's `agent_ref.name`, else its
 * `task_source`; `agent_map` looks up the name, then the task source, then `_default`. A row 0.7.0
 * would leave to task_source resolution (no agent_ref, no mapping) is refused: pivot-miner routes by
 * agent name only.
 */
export function routeRow(row: Record<string, unknown>, opts: RoutingOptions, file: string, line: number): RowRoute {
  const refName = (row.agent_ref as { name: string } | undefined)?.name;
  const taskSource = typeof row.task_source === 'string' ? row.task_source : undefined;
  if (opts.legacy_environment_server !== undefined)
    return legacyRoute(refName, taskSource, opts.legacy_environment_server, opts, { file, line });
  const basis = refName ?? taskSource;
  let agent = refName;
  let agentRef: { name: string } | undefined;
  let overridden: RowRoute['overridden'];
  if (opts.agent_map !== undefined) {
    const mapped =
      entry(opts.agent_map, refName) ?? entry(opts.agent_map, taskSource) ?? entry(opts.agent_map, DEFAULT_ROUTE);
    if (mapped !== undefined) agentRef = { name: (agent = mapped) };
    if (mapped !== undefined && refName !== undefined && refName !== mapped) overridden = [refName, mapped];
  } else if (agent === undefined && opts.agent_name !== undefined) {
    agentRef = { name: (agent = opts.agent_name) };
  }
  const fanOut = entry(opts.fan_out, basis);
  const targets = fanOut ?? (agent === undefined ? [] : [agent]);
  if (targets.length === 0) {
    const reason =
      taskSource === undefined
        ? 'the row has no agent_ref and no agent is given for it (collect.agent_name or agent_map._default)'
        : `the row has no agent_ref and its task_source "${taskSource}" routes to no agent; pivot-miner does not resolve task_source to an agent: name one in collect.agent_map`;
    throw new JsonlError(file, line, reason);
  }
  return {
    ...(agentRef === undefined ? {} : { agentRef }),
    ...(overridden === undefined ? {} : { overridden }),
    dispatches: targets.map((target) => ({ agent: target, repeats: repeatsOf(opts, target, basis, file, line) })),
    repeatKeys: [...new Set(targets.flatMap((target) => repeatKeysOf(target, basis)))],
  };
}

/**
 * A row's route under 0.7.0's legacy routing: stamped with the environment server, run once per
 * repeat on the relay's agent. A row naming another agent is refused as 0.7.0 refuses it; a row
 * naming none gets the relay's agent last. A `num_repeats` dict keys the row's `task_source`, else
 * the environment server (0.7.0 has no dispatched agent for such a row).
 */
function legacyRoute(
  refName: string | undefined,
  taskSource: string | undefined,
  server: LegacyEnvironmentServer,
  opts: RoutingOptions,
  { file, line }: { file: string; line: number },
): RowRoute {
  if (refName !== undefined && refName !== server.agent)
    throw new JsonlError(
      file,
      line,
      `Row agent_ref '${refName}' is not an agent of environment server '${server.name}': '${server.agent}'`,
    );
  const basis = taskSource ?? server.name;
  return {
    environmentServer: server.name,
    ...(refName === undefined ? { lateAgentRef: { name: server.agent } } : {}),
    dispatches: [{ agent: server.agent, repeats: repeatsOf(opts, undefined, basis, file, line) }],
    repeatKeys: [basis],
  };
}
