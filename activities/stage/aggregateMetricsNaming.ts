import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import { labelRuns } from '../../gym/runLabels';
import { environmentServerNamer } from '../run/servers';
import type { EntryGroup, GroupOf } from './aggregateMetricsEntries';

// Which rollouts share an entry of `<stem>_aggregate_metrics.json` and what the entry is called.
// NeMo Gym 0.7.0's collection (rollout_collection.py `_call_aggregate_metrics`) groups rollouts by
// the environment server stamped on them (`_ng_environment_server`), else by the one server that
// fronts their agent, and labels each group by its agent when no other group shares that agent, else
// by the server (`label_runs`). A collect stage following 0.7.0 does that; other stages and 0.4.0's
// files keep one entry per agent.

/** An entry's `agent_ref` name and, under 0.7.0, the environment server it names. */
export interface EntryName {
  label: string;
  environmentServer?: string;
}

export interface EntryNaming {
  /** How entries are grouped; undefined: by agent. */
  groupOf?: GroupOf;
  /** Each group's name, from the groups found; `servingAgent` is the agent that ran a group's rollouts, if a server did. */
  names(groups: ReadonlyMap<string, EntryGroup>, servingAgent: (agent: string) => string): Map<string, EntryName>;
}

export async function entryNaming(plan: RunPlan, stage: RolloutStage, gym070: boolean): Promise<EntryNaming> {
  if (!gym070) return { names: (groups) => new Map([...groups.keys()].map((agent) => [agent, { label: agent }])) };
  const environmentServer = await environmentServerNamer(plan, stage);
  if (stage !== 'collect')
    return {
      names: (groups, servingAgent) =>
        new Map(
          [...groups].map(([group, { agent }]) => [
            group,
            { label: group, environmentServer: environmentServer(servingAgent(agent)) },
          ]),
        ),
    };
  // Looked up once an agent: rollouts of one agent without a stamp all go through the same server.
  const serverOfAgent = new Map<string, string>();
  const groupOf: GroupOf = (agent, stamp) => {
    if (stamp !== undefined) return stamp;
    let server = serverOfAgent.get(agent);
    if (server === undefined) serverOfAgent.set(agent, (server = environmentServer(agent)));
    return server;
  };
  return {
    groupOf,
    names: (groups) => {
      const labels = labelRuns(new Map([...groups].map(([server, { agent }]) => [server, agent])));
      return new Map(
        [...groups.keys()].map((server) => [server, { label: labels.get(server)!, environmentServer: server }]),
      );
    },
  };
}
