// The environment server NeMo Gym 0.7.0 says an agent's rollouts ran through, the name each entry of
// `<stem>_aggregate_metrics.json` carries as `_ng_environment_server`. 0.7.0 reaches an agent only
// through an environment server: one its config declares (an `environment_servers` block naming the
// agent), else a `legacy_agent` relay it generates at start-up and adds to the head's config
// (global_config.py `_front_agents_without_environment_server`). So the name is read from the head's
// config when it has one, and derived as 0.7.0 derives it otherwise (a 0.4.0 head, no head at all).

import { comparePython } from './rewardProfile/profile';
import { pyReprString } from './validator/pythonRepr';

export type GlobalConfig = Record<string, unknown>;

const ENVIRONMENT_SERVERS = 'environment_servers';
const AGENTS = 'responses_api_agents';
const AGENT_SERVER_REF = 'agent_server';
/** The environment server type that relays `/run` and `/aggregate_metrics` to one agent as they are. */
const LEGACY_RELAY = 'legacy_agent';

function isDict(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The agents one environment server's block names (global_config.py `environment_server_agent_refs`):
 * a field whose value has `type: responses_api_agents`, or `agent_server` with no type.
 */
function referencedAgents(server: Record<string, unknown>): string[] {
  return Object.entries(server).flatMap(([field, reference]) => {
    if (!isDict(reference)) return [];
    const refersToAgent = reference.type === AGENTS || (field === AGENT_SERVER_REF && reference.type == null);
    const { name } = reference;
    // 0.7.0 takes str() of a set name; a name in YAML is a string, or a number at most.
    return refersToAgent && (typeof name === 'string' || typeof name === 'number') ? [String(name)] : [];
  });
}

/** The environment servers a config declares in front of `agentName`, in config order (rollout_collection.py `_environment_servers_by_agent`). */
export function declaredEnvironmentServers(config: GlobalConfig, agentName: string): string[] {
  const names: string[] = [];
  for (const [name, instance] of Object.entries(config)) {
    const servers = isDict(instance) ? instance[ENVIRONMENT_SERVERS] : undefined;
    if (!isDict(servers)) continue;
    for (const server of Object.values(servers)) {
      if (isDict(server) && referencedAgents(server).includes(agentName)) names.push(name);
    }
  }
  return names;
}

/**
 * 0.7.0's refusal of a row routed by its agent when several environment servers front that agent
 * (rollout_collection.py `_environment_server_for_agent`, before anything is dispatched). Its advice
 * names taskset routing too, which pivot-miner refuses: legacy routing is what applies here.
 */
export function ambiguousEnvironmentServerMessage(agentName: string, servers: readonly string[]): string {
  const sorted = [...servers].sort(comparePython).map(pyReprString).join(', ');
  return (
    `Agent '${agentName}' is fronted by several environment servers: [${sorted}]. ` +
    'Rows that route by agent cannot choose between them. ' +
    'Set environment_routing_mode=legacy with environment_server_name, or route these rows by taskset.'
  );
}

/** An agent's type, the one key of its `responses_api_agents` block, as 0.7.0's `_agent_instances` reads it. */
export function agentType(config: GlobalConfig, agentName: string): string | undefined {
  const instance = config[agentName];
  const agents = isDict(instance) ? instance[AGENTS] : undefined;
  if (!isDict(agents)) return undefined;
  const types = Object.keys(agents);
  return types.length === 1 ? types[0] : undefined;
}

/**
 * The relay 0.7.0 generates for an agent no environment server names (global_config.py
 * `legacy_environment_server_name`): the agent's type, else a trailing `_agent`, is stripped from its
 * name, so `x_simple_agent` of type `simple_agent` is fronted by `x_environment_server`. Without a
 * type (an agent no config lists) only `_agent` is stripped.
 */
export function legacyEnvironmentServerName(agentName: string, type?: string): string {
  const removeSuffix = (text: string, suffix: string) =>
    suffix !== '' && text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
  let stem = agentName;
  if (type !== undefined) stem = removeSuffix(removeSuffix(stem, `_${type}`), type).replace(/_+$/, '');
  if (stem === agentName) stem = removeSuffix(agentName, '_agent').replace(/_+$/, '');
  return `${stem || type || agentName}_environment_server`;
}

/**
 * The agent a `legacy_agent` environment server relays every `/run` to, for 0.7.0's
 * `environment_routing_mode: legacy`, or why its rows cannot run here. pivot-miner posts rows to
 * agents, so it can stand in for a relay, which passes the row and the answer through as they are,
 * but not for an environment server that runs episodes of its own.
 */
export function legacyRelayAgent(config: GlobalConfig, serverName: string): { agent: string } | { reason: string } {
  const instance = config[serverName];
  const servers = isDict(instance) ? instance[ENVIRONMENT_SERVERS] : undefined;
  // 0.7.0's message (rollout_collection.py `_validate_environment_servers`).
  if (!isDict(servers))
    return { reason: `Environment servers are not present in the running config: ['${serverName}']` };
  const [type, server] = Object.entries(servers)[0] ?? [];
  const agent = isDict(server) && isDict(server[AGENT_SERVER_REF]) ? server[AGENT_SERVER_REF].name : undefined;
  if (type === LEGACY_RELAY && typeof agent === 'string') return { agent };
  return {
    reason:
      `environment server "${serverName}" is of type ${type ?? '(none)'}, not a ${LEGACY_RELAY} relay with an agent_server: ` +
      'pivot-miner posts each row to an agent, so it can stand in only for a relay, which passes rows to its agent unchanged',
  };
}

/**
 * 0.7.0's `ng_collect_rollouts` looks every stamped row's server up in the config before it validates
 * the stamps (rollout_collection.py `_run_from_config`, through `_agent_name_for_row`), so a server the
 * config lacks stops it with omegaconf's `ConfigKeyError: Missing key <name>`, not with the message
 * `_validate_environment_servers` has for it. Its words, then what they mean.
 */
function unlistedStampMessage(serverName: string): string {
  return `Missing key ${serverName}: the row's _ng_environment_server names no environment server of the running config`;
}

/**
 * Why a row routed by its agent (`environment_routing_mode: agent`) cannot run through the environment
 * server its data stamps on it, or undefined when it can. 0.7.0 posts such a row to that server,
 * after refusing a server the config lacks (unlistedStampMessage) or one that does not name the
 * row's agent (rollout_collection.py `_validate_environment_servers`, its messages); pivot-miner posts the row
 * to its agent, which stands in only for a `legacy_agent` relay to that same agent.
 */
export function stampedServerRefusal(
  config: GlobalConfig,
  serverName: string,
  row: { agentName: string; taskSource?: string },
): string | undefined {
  const { agentName, taskSource } = row;
  const instance = config[serverName];
  const servers = isDict(instance) ? instance[ENVIRONMENT_SERVERS] : undefined;
  if (!isDict(servers)) return unlistedStampMessage(serverName);
  const server = Object.values(servers)[0];
  const agents = isDict(server) ? referencedAgents(server) : [];
  if (agents.length > 0 && !agents.includes(agentName))
    return (
      `Row agent_ref ${pyReprString(agentName)} is not an agent of environment server ${pyReprString(serverName)}: ` +
      agents.map(pyReprString).join(', ')
    );
  const resources = isDict(server) && isDict(server.resources_server) ? server.resources_server.name : undefined;
  if (taskSource !== undefined && typeof resources === 'string' && taskSource !== resources)
    return (
      `Row task_source ${pyReprString(taskSource)} does not match environment server ${pyReprString(serverName)} ` +
      `resources server ${pyReprString(resources)}`
    );
  const relay = legacyRelayAgent(config, serverName);
  if ('reason' in relay) return relay.reason;
  if (relay.agent === agentName) return undefined;
  return (
    `environment server "${serverName}" relays to agent "${relay.agent}", not to the row's agent "${agentName}": ` +
    'pivot-miner posts each row to its own agent, so it can stand in only for a relay to that agent'
  );
}
