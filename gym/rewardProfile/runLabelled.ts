import { labelRuns, runKey } from '../runLabels';
import type { ProfiledInput, ProfileSources } from './sources';

// NeMo Gym 0.7.0's reward profiling names each rollout's group by what ran it (reward_profile.py
// `_agent_name`: `rollout_run_labels` of the materialized rows): the profile's agent name of a row
// is its run key's label. Inputs without a stamp keep their agent's name, so a run without stamps
// reads its inputs once more (a pass over the row index, or the materialized file) and is otherwise
// profiled as before.

/** `sources` with each input's agent name replaced by its run's label. */
export async function byRunLabel(sources: ProfileSources): Promise<ProfileSources> {
  const agentByKey = new Map<string, string>();
  let stamped = false;
  for await (const { agentName, environmentServer } of sources.inputs()) {
    stamped ||= environmentServer !== undefined;
    const key = runKey(agentName, environmentServer);
    if (!agentByKey.has(key)) agentByKey.set(key, agentName);
  }
  if (!stamped) return sources;
  const labels = labelRuns(agentByKey);
  return {
    results: () => sources.results(),
    inputs: () => labelled(sources.inputs(), labels),
  };
}

async function* labelled(
  inputs: AsyncIterable<ProfiledInput>,
  labels: Map<string, string>,
): AsyncGenerator<ProfiledInput> {
  for await (const input of inputs)
    yield { ...input, agentName: labels.get(runKey(input.agentName, input.environmentServer))! };
}
