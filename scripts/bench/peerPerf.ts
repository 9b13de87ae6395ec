import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bundleModuleMap } from './peerProfile';

// The worker's CPU as Linux's `perf` samples it (on-CPU time of every thread, native code and the
// kernel included), beside V8's own sampler: V8 samples on wall time, so on a busy 2-core host its
// figures hold the time a thread waited for a core, and it cannot see Node's helper threads (libuv's
// file system pool, V8's collector threads) or the Temporal SDK core's. The worker runs with
// --perf-basic-prof, so JIT-compiled functions have names and bundle lines, mapped to modules as in
// peerProfile.ts.

export const perfAvailable = (): boolean => spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;

/** Starts `perf record` on every thread of `pid`; stop() ends it (SIGINT) and waits until it wrote `out`. */
export function startPerf(pid: number, out: string): { stop(): Promise<void> } {
  const child: ChildProcess = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', out],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.kill('SIGINT');
      await exited;
    },
  };
}

export interface PerfEntry {
  percent: number;
  name: string;
}

/** `perf report` rows (`12.34%  a  b`) sorted by `sort`, self time only, as percent of all samples. */
export function perfRows(data: string, sort: string, percentLimit = 0.3, children = false): PerfEntry[] {
  const view = children ? ['--children'] : ['--no-children'];
  const text = execFileSync(
    'perf',
    ['report', '-i', data, '--stdio', ...view, '-g', 'none', '--sort', sort, '--percent-limit', String(percentLimit)],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  return parsePerfRows(text);
}

export function parsePerfRows(text: string): PerfEntry[] {
  const rows: PerfEntry[] = [];
  for (const line of text.split('\n')) {
    // With --children a row has two figures, inclusive then self; the first is the one wanted.
    const m = /^\s+([\d.]+)%\s+(?:[\d.]+%\s+)?(.*\S)\s*$/.exec(line);
    if (m) rows.push({ percent: Number(m[1]), name: m[2]!.replace(/\s+/g, ' ') });
  }
  return rows;
}

/**
 * A symbol's module: for a JIT-compiled function of the bundle (`JS:*name file:///…/dist/cli.js:L:C`)
 * the source module of line L; for the rest the shared object perf names, or the kernel.
 */
export function perfModule(
  symbolRow: string,
  bundles: ReadonlyMap<string, (line: number) => string | undefined>,
): string {
  const js = /(\/[^\s:]+\.(?:c?js)):(\d+)/.exec(symbolRow);
  if (js) {
    const file = js[1]!.replace(/^\/+/, '/');
    const lookup = bundles.get(file);
    if (lookup) return lookup(Number(js[2]) - 1) ?? file;
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    return pkg ? `npm:${pkg[1]}` : file;
  }
  if (/\bnode:/.test(symbolRow)) return 'node: (JavaScript)';
  if (/\[k\]/.test(symbolRow)) return 'kernel';
  const dso = /^(\S+)\s+\[/.exec(symbolRow)?.[1];
  return dso ?? 'other';
}

/**
 * What a `dso [.] symbol` row is spent on: JIT code by its source module (as perfModule), V8's and
 * Node's native work by kind, the kernel, libc, the Temporal SDK core (index.node, Rust).
 */
export function perfCategory(row: string, bundles: ReadonlyMap<string, (line: number) => string | undefined>): string {
  if (/\[k\]/.test(row)) return 'kernel (syscalls, scheduling, page faults)';
  if (/\bJS:/.test(row) || /\.c?js:\d+/.test(row)) return `JS ${perfModule(row, bundles)}`;
  if (/^index\.node\b/.test(row)) return 'Temporal SDK core (index.node, Rust)';
  if (/^libc/.test(row))
    return /malloc|free|_int_|chunk|memmove|memcpy|memset|realloc|calloc/.test(row)
      ? 'libc malloc / memcpy'
      : 'libc other';
  if (
    /Scaveng|MarkCompact|ConcurrentMarking|Marking|Sweep|Evacuat|Heap::|MinorM|PagedSpace|MemoryChunk|MemoryAllocator|GCTracer|RememberedSet|SlotSet|WeakObjects|Collector/.test(
      row,
    )
  )
    return 'V8 garbage collection';
  if (/JsonParser|JsonStringifier|Builtins_Json|JsonParse|JsonStringify/.test(row))
    return 'V8 JSON.parse / JSON.stringify';
  if (
    /compiler::|Turbofan|Maglev|maglev|Compiler|Parser|Scanner|Bytecode|baseline|Sparkplug|OptimizedCompilationJob/.test(
      row,
    )
  )
    return 'V8 compilers';
  if (/Builtins_/.test(row)) return 'V8 builtins (property access, calls, promises, strings)';
  if (/v8::|Runtime_/.test(row)) return 'V8 runtime other';
  if (/uv_|uv__/.test(row)) return 'libuv';
  if (/node::/.test(row)) return 'Node C++ (node::)';
  return (/^(\S+)/.exec(row)?.[1] ?? 'other') + ' other';
}

/** The perf summary as lines: by thread, by kind of work, top symbols; µs per rollout from the measured CPU. */
export function perfLines(
  data: string,
  workerCpuSeconds: number,
  rollouts: number,
  bundleFiles: readonly string[],
  top = 15,
): string[] {
  const bundles = new Map(bundleFiles.map((f) => [f, bundleModuleMap(readFileSync(f, 'utf8'))] as const));
  const us = (percent: number) => ((1e6 * workerCpuSeconds * percent) / 100 / rollouts).toFixed(0).padStart(5);
  const lines: string[] = [];
  const show = (title: string, rows: PerfEntry[], n = top) => {
    lines.push(`    ${title}:`);
    for (const r of rows.slice(0, n))
      lines.push(`      ${us(r.percent)} µs/rollout ${r.percent.toFixed(1).padStart(5)}%  ${r.name}`);
  };
  // Per thread (perf's `pid` is the thread id; the worker's own pid is its main thread), with what each spends on most.
  const threads = new Map<string, { percent: number; kinds: Map<string, number> }>();
  for (const r of perfRows(data, 'pid,dso,sym', 0)) {
    const [thread = '?', ...rest] = r.name.split(' ');
    const t = threads.get(thread) ?? { percent: 0, kinds: new Map<string, number>() };
    t.percent += r.percent;
    const c = perfCategory(rest.join(' '), bundles);
    t.kinds.set(c, (t.kinds.get(c) ?? 0) + r.percent);
    threads.set(thread, t);
  }
  lines.push("    by thread (tid:name; the worker's pid is its main thread), and its three largest kinds of work:");
  for (const [thread, t] of [...threads].sort((a, b) => b[1].percent - a[1].percent).slice(0, 10)) {
    const kinds = [...t.kinds]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, p]) => `${k} ${((100 * p) / t.percent).toFixed(0)}%`)
      .join(', ');
    lines.push(`      ${us(t.percent)} µs/rollout ${t.percent.toFixed(1).padStart(5)}%  ${thread}: ${kinds}`);
  }
  const symbols = perfRows(data, 'dso,sym', 0);
  const byCategory = new Map<string, number>();
  for (const r of symbols) {
    const c = perfCategory(r.name, bundles);
    byCategory.set(c, (byCategory.get(c) ?? 0) + r.percent);
  }
  show(
    'by kind of work (native code by kind, JIT code by source module)',
    [...byCategory].map(([name, percent]) => ({ name, percent })).sort((a, b) => b.percent - a.percent),
    25,
  );
  show('top symbols, self', symbols);
  // Inclusive time of the project's JavaScript functions, from perf's call chains (V8 keeps frame pointers).
  const inclusive = perfRows(data, 'sym', 0.5, true)
    .filter((r) => /\bJS:/.test(r.name) && !/node_modules|node:/.test(r.name))
    .map((r) => ({
      percent: r.percent,
      name: `${r.name.replace(/^\[\.\]\s*/, '').replace(/\s.*$/, '')} (${perfModule(r.name, bundles)})`,
    }));
  show("the project's JavaScript functions, inclusive (callees counted)", inclusive, 20);
  return lines;
}
