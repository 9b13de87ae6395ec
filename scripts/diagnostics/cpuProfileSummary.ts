// What the CPU profiles of `npm run bench -- --worker-cpu-profile=DIR` hold, per worker thread:
// how much of the time it was busy, and the functions holding the most of its busy samples (self
// time, V8's "bottom-up" view). Run: npx tsx scripts/diagnostics/cpuProfileSummary.ts DIR [--top=N]
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCpuProfile, type CpuProfile } from './v8CpuProfile';

/** V8's name for the samples taken while the thread had nothing to run. */
const IDLE = '(idle)';

export interface ThreadSummary {
  thread: string;
  totalMs: number;
  busyMs: number;
  /** Self time by function (`name url:line`; V8's own entries, such as the collector, by name), most first. */
  functions: Array<{ name: string; ms: number }>;
}

/** The profile files of one process's thread, by `<pid>-t<thread>`, slices in order. */
function filesByThread(dir: string): Map<string, string[]> {
  const byThread = new Map<string, string[]>();
  for (const file of readdirSync(dir).sort()) {
    const match = /^worker-(\d+-t\d+)-\d+\.cpuprofile$/.exec(file);
    if (!match?.[1]) continue;
    byThread.set(match[1], [...(byThread.get(match[1]) ?? []), path.join(dir, file)]);
  }
  return byThread;
}

/** Self time of each sampled function across the slices of one thread. */
export function summarizeThread(thread: string, profiles: readonly CpuProfile[]): ThreadSummary {
  const selfMs = new Map<string, number>();
  let totalMs = 0;
  for (const profile of profiles) {
    // V8's own entries (the collector, idle, native calls) have no script to point at.
    const nameOf = new Map(
      profile.nodes.map(({ id, callFrame: f }) => [
        id,
        f.url ? `${f.functionName || '(anonymous)'} ${f.url}:${f.lineNumber + 1}` : f.functionName,
      ]),
    );
    profile.samples.forEach((id, index) => {
      // Each delta is the time since the previous sample, in microseconds.
      const ms = (profile.timeDeltas[index] ?? 0) / 1000;
      const name = nameOf.get(id) ?? '(unknown)';
      selfMs.set(name, (selfMs.get(name) ?? 0) + ms);
      totalMs += ms;
    });
  }
  const functions = [...selfMs].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
  const idleMs = selfMs.get(IDLE) ?? 0;
  return { thread, totalMs, busyMs: totalMs - idleMs, functions: functions.filter((f) => f.name !== IDLE) };
}

export function summarizeDir(dir: string): ThreadSummary[] {
  return [...filesByThread(dir)].map(([thread, files]) => summarizeThread(thread, files.map(readCpuProfile)));
}

function main(): void {
  const usage =
    'usage: npx tsx scripts/diagnostics/cpuProfileSummary.ts DIR [--top=N]  (N a whole number of functions per thread)';
  let parsed;
  try {
    parsed = parseArgs({ options: { top: { type: 'string' } }, strict: true, allowPositionals: true });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${usage}`, { cause: err });
  }
  const [dir, ...extra] = parsed.positionals;
  const top = Number(parsed.values.top ?? 15);
  if (!dir || extra.length > 0 || !Number.isInteger(top) || top < 1) throw new Error(usage);
  const threads = summarizeDir(dir);
  if (threads.length === 0) throw new Error(`${dir}: no worker-<pid>-t<thread>-<slice>.cpuprofile files`);
  for (const t of threads) {
    console.log(
      `worker ${t.thread}: busy ${(t.busyMs / 1000).toFixed(1)} s of ${(t.totalMs / 1000).toFixed(1)} s sampled (${((100 * t.busyMs) / t.totalMs).toFixed(1)}%)`,
    );
    for (const f of t.functions.slice(0, top)) {
      console.log(
        `  ${((100 * f.ms) / t.busyMs).toFixed(1).padStart(5)}% of busy  ${f.ms.toFixed(0).padStart(6)} ms  ${f.name}`,
      );
    }
  }
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
