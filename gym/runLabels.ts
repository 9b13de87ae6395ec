// What NeMo Gym 0.7.0 groups a rollout under for aggregate metrics and reward profiling, and the
// name it gives each group (global_config.py `rollout_run_key`, `label_runs`). A rollout is keyed by
// the environment server stamped on it (`_ng_environment_server`), else by its agent; a key is
// labelled by its agent when no other key shares that agent, else by itself, so two servers in front
// of one agent stay apart under their own names.

export const ENVIRONMENT_SERVER_STAMP = '_ng_environment_server';

/** A row's stamp when it is a string (0.7.0 reads no other kind of stamp as a server name), else undefined. */
export function environmentServerStamp(row: Record<string, unknown>): string | undefined {
  const stamp = row[ENVIRONMENT_SERVER_STAMP];
  return typeof stamp === 'string' ? stamp : undefined;
}

/** 0.7.0's `rollout_run_key` of a row with `agentName` and, maybe, a stamp. */
export function runKey(agentName: string, environmentServer: string | undefined): string {
  return environmentServer ?? agentName;
}

/**
 * Each key's label (`label_runs`), from each key's agent: its first row's, as 0.7.0 takes it. Every
 * label is unique; a label that would repeat because a key equals another key's agent falls back
 * to the key.
 */
export function labelRuns(agentByKey: ReadonlyMap<string, string | undefined>): Map<string, string> {
  const keysByAgent = new Map<string, number>();
  for (const agent of agentByKey.values())
    if (agent !== undefined) keysByAgent.set(agent, (keysByAgent.get(agent) ?? 0) + 1);
  const labels = new Map<string, string>();
  for (const [key, agent] of agentByKey)
    labels.set(key, agent !== undefined && keysByAgent.get(agent) === 1 ? agent : key);
  for (;;) {
    const counts = new Map<string, number>();
    for (const label of labels.values()) counts.set(label, (counts.get(label) ?? 0) + 1);
    const clashing = [...labels].filter(([key, label]) => counts.get(label)! > 1 && label !== key);
    if (clashing.length === 0) return labels;
    for (const [key] of clashing) labels.set(key, key);
  }
}
