import { ConfigError } from '../../contracts/errors';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import { stageMaterializeOptions, stageSettings } from '../../contracts/stageSettings';
import { legacyRelayAgent } from '../../gym/environmentServers';
import type { MaterializeOptions } from '../../gym/materialize';
import { headGlobalConfig } from './servers';

/**
 * How a stage materializes its rows on this worker: the config's options and, under NeMo Gym 0.7.0's
 * `environment_routing_mode: legacy`, the agent the named relay passes rows to, which only the head's
 * config knows (0.7.0 reads it there too, to fill rows without an agent_ref).
 */
export async function workerMaterializeOptions(plan: RunPlan, stage: RolloutStage): Promise<MaterializeOptions> {
  const settings = stageSettings(plan, stage);
  const options = stageMaterializeOptions(settings);
  const name = settings.legacyEnvironmentServer;
  if (name === undefined) return options;
  const relay = legacyRelayAgent(await headGlobalConfig(plan), name);
  if ('reason' in relay) throw new ConfigError(`collect.environment_server_name: ${relay.reason}`);
  return { ...options, legacy_environment_server: { name, agent: relay.agent } };
}
