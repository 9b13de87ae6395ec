import { readdirSync, readFileSync } from 'node:fs';

// CPU seconds per process from /proc, so the bench can say which process paid for the durable
// path's extra work. On a machine with few cores the rollout servers and the orchestration compete
// for the same CPUs, and the CPU a side uses is a cost of that side even when wall time hides it.

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU seconds of `pid` (all its threads); 0 once it has exited. */
export function cpuSeconds(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // Fields after the command name, which is in parentheses and may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Children of this process whose command line contains `needle` (e.g. the Temporal dev server). */
export function childPidsMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
    const children = readFileSync(`/proc/${process.pid}/task/${tid}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ').map(Number) : []) {
      const cmdline = readFileSync(`/proc/${child}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(needle)) pids.push(child);
    }
  }
  return pids;
}

/** CPU seconds so far of each named process. */
export function cpuSnapshot(processes: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds(pid)]));
}

/** CPU seconds each process used between two snapshots of the same processes. */
export function cpuUsed(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([name, s]) => [name, s - (before[name] ?? 0)]));
}
