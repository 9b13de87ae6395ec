import { readdirSync, readFileSync } from 'node:fs';

// CPU seconds per process from /proc, so the bench can say which process paid for the durable
// path's extra work. On a machine with few cores the rollout servers and the orchestration compete
// for the same CPUs, and the CPU a side uses is a cost of that side even when wall time hides it.

const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command name (in parentheses, and may itself hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds of `pid` (all its threads); 0 once it has exited. */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND : 0;
}

/** User + system CPU seconds of the children `pid` has waited for: what a pool of worker processes spent once it ended. */
export function reapedChildrenCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND : 0;
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

export interface CpuTrace {
  /** CPU seconds each process used between two epoch-ms instants inside the trace (interpolated). */
  between(fromMs: number, toMs: number): Record<string, number>;
}

/** Samples the processes' CPU every `everyMs` until stop(), so a span known only later can be charged. */
export function startCpuTrace(processes: Record<string, number>, everyMs = 100): { stop(): CpuTrace } {
  const samples: Array<{ t: number; cpu: Record<string, number> }> = [];
  const take = () => samples.push({ t: Date.now(), cpu: cpuSnapshot(processes) });
  take();
  const timer = setInterval(take, everyMs);
  const at = (t: number, name: string): number => {
    // Samples are few (one per `everyMs`), so a linear scan is fine.
    let i = samples.findIndex((s) => s.t >= t);
    if (i === -1) i = samples.length - 1;
    if (i === 0) return samples[0]!.cpu[name] ?? 0;
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const f = b.t === a.t ? 1 : Math.min(1, Math.max(0, (t - a.t) / (b.t - a.t)));
    return (a.cpu[name] ?? 0) + f * ((b.cpu[name] ?? 0) - (a.cpu[name] ?? 0));
  };
  return {
    stop() {
      clearInterval(timer);
      take();
      return {
        between: (fromMs, toMs) =>
          Object.fromEntries(Object.keys(processes).map((name) => [name, at(toMs, name) - at(fromMs, name)])),
      };
    },
  };
}
