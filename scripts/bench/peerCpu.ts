import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { sessionMembers, type RunningNgRun } from '../lib/nemoGym';
import { cpuSeconds } from './cpu';
import type { SimulatorProcess } from './services';

// The peer bench's CPU accounting from /proc: per process group (ng_run's servers by what they
// serve, Ray, the simulator), per process tree (an `ng_*` command and its helpers), and per thread
// name (the worker's main thread against V8's, libuv's and the SDK core's helpers).

/** CPU seconds of each process group, a group being a list of pids. */
export function groupCpu(groups: Record<string, readonly number[]>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(groups).map(([name, pids]) => [name, pids.reduce((s, pid) => s + cpuSeconds(pid), 0)]),
  );
}
export const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([name, s]) => [name, s - (before[name] ?? 0)]));

/**
 * ng_run's processes by what they serve: each server is a `python app.py` run in its own folder
 * (responses_api_agents/…, resources_servers/…, responses_api_models/…, and 0.7.0's
 * environment_servers/…); the rest of ng_run's session is ng_run itself and Ray (its GCS, raylet,
 * dashboard and their helpers).
 */
export function serverGroups(ngRun: RunningNgRun, sims: SimulatorProcess): Record<string, number[]> {
  const groups: Record<string, number[]> = { simulator: [sims.pid] };
  const kinds: Record<string, string> = {
    responses_api_agents: 'agent',
    resources_servers: 'resources',
    responses_api_models: 'model',
    environment_servers: 'environment',
  };
  for (const pid of sessionMembers(ngRun.child.pid!)) {
    let cmdline: string;
    let cwd: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    const kind = kinds[path.basename(path.dirname(cwd))];
    const label =
      /\bapp\.py\b/.test(cmdline) && kind
        ? kind === 'model'
          ? path.basename(cwd)
          : kind
        : /\bng_run\b/.test(cmdline)
          ? 'ng_run'
          : 'ray';
    (groups[label] ??= []).push(pid);
  }
  return groups;
}

/** A process and its descendants now (an `ng_*` command may start helpers). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const tid of readdirSync(`/proc/${out[i]}/task`)) {
        const children = readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8').trim();
        if (children) out.push(...children.split(' ').map(Number));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** CPU seconds of a process's threads, summed by thread name: `main` (Node's main thread), the rest as the kernel names them (V8's and libuv's helpers show as `node`, the SDK core's as `tokio-runtime-w`). */
export function threadCpu(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name =
        tid === String(pid)
          ? 'main'
          : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[-_ ]?\d+$/, '');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Thread ended.
    }
  }
  return out;
}
