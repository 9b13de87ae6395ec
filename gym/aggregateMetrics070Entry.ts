import type { EntryValues } from './aggregateMetricsFile';
import { AGENT_SAMPLE, agentEntries070, aggregateMetrics070 } from './aggregateMetrics070';
import type { PyDict } from './pythonJson';
import { verifyResponseSources } from './aggregateMetrics';
import { NotInKeyOrder, profileKeyOrdered, type ProfiledInput, type StreamedProfile } from './rewardProfile/stream';
import { TASK } from './rewardProfile/table';

// A stage's 0.7.0 `/aggregate_metrics` entry computed in-process: a task at a time when the lines come
// in key order (a merged stage's digests do), so a large stage is never held in memory; in tables
// otherwise (aggregateMetrics070.ts).

/** The 0.7.0 entry values of one agent's lines (read as often as wanted), named by `environmentServer`. */
export async function entryValues070(
  lines: () => AsyncIterable<string>,
  environmentServer: string,
): Promise<EntryValues> {
  const repeatIndices = new Set<number>();
  try {
    const sources = verifyResponseSources(lines, (rollout) => repeatIndices.add(rollout));
    const profile = await profileKeyOrdered(sources, false);
    const { agentMetrics, keyMetrics, repeats } = agentEntries070(
      { ...profile, agentRows: profile.agents() },
      repeatIndices.size,
    );
    return { agentMetrics, keyMetrics, groups: groupRows(profile), gym070: { environmentServer, repeats } };
  } catch (err) {
    if (!(err instanceof NotInKeyOrder)) throw err;
  }
  const all: string[] = [];
  for await (const line of lines()) all.push(line);
  const { agentMetrics, keyMetrics, groups, repeats } = aggregateMetrics070(all) ?? {
    agentMetrics: new Map(),
    keyMetrics: new Map(),
    groups: [],
    repeats: [],
  };
  return { agentMetrics, keyMetrics, groups, gym070: { environmentServer, repeats } };
}

/** The group rows, each named by its task, read a task at a time. */
async function* groupRows(profile: StreamedProfile): AsyncGenerator<PyDict> {
  let task = 0;
  const sampleOf = (input: ProfiledInput) => {
    task = input.task;
    return Promise.resolve(AGENT_SAMPLE);
  };
  for await (const { typed } of profile.groups(sampleOf)) {
    typed.set(TASK, BigInt(task));
    yield typed;
  }
}
