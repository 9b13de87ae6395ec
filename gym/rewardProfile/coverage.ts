import { comparePython } from './profile';

// NeMo Gym 0.7.0's coverage of masked samples (`coverage_by_agent`): for each agent that masked at
// least one rollout, how many rollouts and tasks its quality metrics were computed from. An agent
// that masked nothing gets no coverage keys, so its row reads as before 0.7.0.

export type CoverageEntries = [string, bigint][];

export class CoverageCounter {
  private readonly agents = new Map<
    string,
    { measured: number; masked: number; tasks: Set<number>; measuredTasks: Set<number> }
  >();

  /** A completed rollout of `agent`, in key order. */
  add(agent: string, task: number, masked: boolean): void {
    let counts = this.agents.get(agent);
    if (!counts)
      this.agents.set(agent, (counts = { measured: 0, masked: 0, tasks: new Set(), measuredTasks: new Set() }));
    counts.tasks.add(task);
    if (masked) counts.masked++;
    else {
      counts.measured++;
      counts.measuredTasks.add(task);
    }
  }

  /** Each masking agent's entries, agents in the order of their first rollout. */
  entries(): Map<string, CoverageEntries> {
    const out = new Map<string, CoverageEntries>();
    for (const [agent, c] of this.agents) {
      if (c.masked === 0) continue;
      out.set(agent, [
        ['coverage/measured_rollouts', BigInt(c.measured)],
        ['coverage/masked_rollouts', BigInt(c.masked)],
        ['coverage/measured_tasks', BigInt(c.measuredTasks.size)],
        ['coverage/fully_masked_tasks', BigInt(c.tasks.size - c.measuredTasks.size)],
      ]);
    }
    return out;
  }
}

/** Whether any task is run by more than one agent (NeMo Gym 0.7.0's fan-out): then groups are (task, agent). */
export class FanOutDetector {
  private readonly agentsOfTask = new Map<number, string>();
  fanOut = false;

  add(task: number, agent: string): void {
    const seen = this.agentsOfTask.get(task);
    if (seen === undefined) this.agentsOfTask.set(task, agent);
    else if (seen !== agent) this.fanOut = true;
  }
}

/** Splits one task's rollouts (each with its agent) into per-agent groups in Python's name order. */
export function byAgent<T>(items: readonly T[], agentOf: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(agentOf(item), [...(groups.get(agentOf(item)) ?? []), item]);
  return [...groups].sort(([a], [b]) => comparePython(a, b));
}
