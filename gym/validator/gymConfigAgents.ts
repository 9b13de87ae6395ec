// `validate --config`: which agents a NeMo Gym config YAML defines, so every row's agent_ref can
// be checked to route somewhere that `ng_run` would actually start. An agent is a top-level block
// with `responses_api_agents`; its `resources_server.name` must name a top-level block as well.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { pyReprString } from './pythonRepr';

const serverRefSchema = z.looseObject({ name: z.string().min(1) });
const agentImplementationSchema = z.looseObject({ resources_server: serverRefSchema.optional() });
const agentBlockSchema = z.looseObject({
  responses_api_agents: z.record(z.string(), agentImplementationSchema),
});
const resourcesServerBlockSchema = z.looseObject({ resources_servers: z.record(z.string(), z.unknown()) });
const topLevelSchema = z.record(z.string(), z.unknown());

export class GymConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GymConfigError';
  }
}

/** Checks an agent name against the config; returns the failure message, or undefined if fine. */
export type AgentNameCheck = (name: string) => string | undefined;

function describeAgentProblem(
  configPath: string,
  config: Record<string, unknown>,
  agentName: string,
  block: z.infer<typeof agentBlockSchema>,
): string | undefined {
  const implementations = Object.values(block.responses_api_agents);
  if (implementations.length === 0)
    return `agent ${pyReprString(agentName)} in ${configPath} has no implementation under responses_api_agents`;
  for (const implementation of implementations) {
    const serverName = implementation.resources_server?.name;
    if (serverName === undefined)
      return `agent ${pyReprString(agentName)} in ${configPath} has no resources_server.name`;
    if (!Object.hasOwn(config, serverName) || !resourcesServerBlockSchema.safeParse(config[serverName]).success) {
      return `agent ${pyReprString(agentName)} uses resources server ${pyReprString(serverName)}, which is not a resources_servers block in ${configPath}`;
    }
  }
  return undefined;
}

/** The agents of a config: the check per row, and the names it passes (which can cross to a
 * thread, unlike the check). */
export interface AgentNames {
  check: AgentNameCheck;
  accepted: ReadonlySet<string>;
}

/** Reads the config once; throws GymConfigError if the file is unusable. */
export async function loadAgentNames(configPath: string): Promise<AgentNames> {
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (error) {
    throw new GymConfigError(`cannot read Gym config ${configPath}: ${(error as Error).message}`);
  }
  // Loaded here, not on import: only --config needs it, and `validate` without it starts faster.
  const YAML = await import('yaml');
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (error) {
    throw new GymConfigError(`cannot parse Gym config ${configPath}: ${(error as Error).message}`);
  }
  const config = topLevelSchema.safeParse(parsed);
  if (!config.success) throw new GymConfigError(`Gym config ${configPath} must be a YAML mapping of server blocks`);

  const agents = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries(config.data)) {
    const block = agentBlockSchema.safeParse(value);
    if (block.success) agents.set(name, describeAgentProblem(configPath, config.data, name, block.data));
  }
  if (agents.size === 0) throw new GymConfigError(`Gym config ${configPath} defines no responses_api_agents`);
  const known = [...agents.keys()].join(', ');
  const check: AgentNameCheck = (name) => {
    if (!agents.has(name))
      return `agent_ref.name ${pyReprString(name)} is not an agent defined in ${configPath} (agents: ${known})`;
    return agents.get(name);
  };
  return { check, accepted: new Set([...agents].filter(([, problem]) => problem === undefined).map(([name]) => name)) };
}
