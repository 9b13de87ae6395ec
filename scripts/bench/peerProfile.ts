import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readCpuProfile, type CpuProfile } from '../diagnostics/v8CpuProfile';

// Where the worker's CPU goes in the peer bench's profiled round (scripts/diagnostics/cpuProfile.cjs): V8's samples
// of each thread, grouped by the module of the function on the stack. The worker runs dist/cli.js,
// an esbuild bundle that marks where each source module begins (`// activities/chunk/chunk.ts`), so a
// line of the bundle maps back to its module; node_modules packages and Node's own modules are
// named as such, and V8's entries without a script (the collector, `(program)`, builtins such as
// JSON.parse when sampled outside JavaScript) by their name.

type CallFrame = CpuProfile['nodes'][number]['callFrame'];

/** For a bundle made by esbuild: the source module of each line, from its `// path.ts` markers. */
export function bundleModuleMap(text: string): (line: number) => string | undefined {
  const starts: Array<[number, string]> = [];
  text.split('\n').forEach((l, i) => {
    const m = /^\/\/ ((?:[\w.-]+\/)*[\w.-]+\.(?:ts|js|cjs|mjs))$/.exec(l);
    if (m) starts.push([i, m[1]!]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found: string | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]![0] <= line) {
        found = starts[mid]![1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

const IDLE = new Set(['(idle)']);

/** The module a frame belongs to. `bundles` maps a bundle's file URL to its line → module lookup. */
export function moduleOf(frame: CallFrame, bundles: ReadonlyMap<string, (line: number) => string | undefined>): string {
  const { url, functionName, lineNumber } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : `(native) ${functionName || '(anonymous)'}`;
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/').slice(0, 2).join('/');
  const bundle = bundles.get(url);
  if (bundle) return bundle(lineNumber) ?? path.basename(url);
  return url.replace(/^file:\/\//, '');
}

export interface ThreadProfile {
  thread: string;
  busyMs: number;
  idleMs: number;
  /** Self time by module and by function (`name (module)`), most first. */
  selfByModule: Array<[string, number]>;
  selfByFunction: Array<[string, number]>;
  /** Inclusive time (on the stack at all) by module and by function of the project's own modules. */
  inclusiveByModule: Array<[string, number]>;
  inclusiveByFunction: Array<[string, number]>;
}

/** A module of the project itself (not a package, not Node, not V8). */
export const ownModule = (m: string) => !m.startsWith('npm:') && !m.startsWith('node:') && !m.startsWith('(');

export function summarizeProfile(
  thread: string,
  profile: CpuProfile,
  bundles: ReadonlyMap<string, (line: number) => string | undefined>,
): ThreadProfile {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const moduleById = new Map(profile.nodes.map((n) => [n.id, moduleOf(n.callFrame, bundles)]));
  const fnName = (id: number) => `${byId.get(id)!.callFrame.functionName || '(anonymous)'} (${moduleById.get(id)})`;
  // Each node's stack, as the modules and functions on it, computed once per node.
  const stacks = new Map<number, { modules: Set<string>; functions: Set<string> }>();
  const stackOf = (id: number): { modules: Set<string>; functions: Set<string> } => {
    const known = stacks.get(id);
    if (known) return known;
    const up = parent.get(id);
    const base = up === undefined ? { modules: new Set<string>(), functions: new Set<string>() } : stackOf(up);
    const mine = { modules: new Set(base.modules), functions: new Set(base.functions) };
    const m = moduleById.get(id)!;
    mine.modules.add(m);
    if (ownModule(m)) mine.functions.add(fnName(id));
    stacks.set(id, mine);
    return mine;
  };
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  const selfByModule = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const inclusiveByModule = new Map<string, number>();
  const inclusiveByFunction = new Map<string, number>();
  let busyMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node) return;
    if (IDLE.has(node.callFrame.functionName) && node.callFrame.url === '') {
      idleMs += ms;
      return;
    }
    busyMs += ms;
    add(selfByModule, moduleById.get(id)!, ms);
    add(selfByFunction, fnName(id), ms);
    const stack = stackOf(id);
    for (const m of stack.modules) add(inclusiveByModule, m, ms);
    for (const f of stack.functions) add(inclusiveByFunction, f, ms);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    thread,
    busyMs,
    idleMs,
    selfByModule: sorted(selfByModule),
    selfByFunction: sorted(selfByFunction),
    inclusiveByModule: sorted(inclusiveByModule),
    inclusiveByFunction: sorted(inclusiveByFunction),
  };
}

/** Summaries of every `worker-<pid>-t<thread>.cpuprofile` in `dir`, busiest thread first. */
export function summarizeProfileDir(dir: string, bundleFiles: readonly string[]): ThreadProfile[] {
  const bundles = new Map(
    bundleFiles.map((file) => [`file://${file}`, bundleModuleMap(readFileSync(file, 'utf8'))] as const),
  );
  return readdirSync(dir)
    .filter((f) => /^worker-\d+-t\d+\.cpuprofile$/.test(f))
    .map((f) => summarizeProfile(f.replace(/^worker-|\.cpuprofile$/g, ''), readCpuProfile(path.join(dir, f)), bundles))
    .sort((a, b) => b.busyMs - a.busyMs);
}

/** The summary as lines: per thread, busy ms per rollout and the top entries of each view. */
export function profileLines(threads: readonly ThreadProfile[], rollouts: number, top = 12): string[] {
  const lines: string[] = [];
  const perRollout = (ms: number) => ((1000 * ms) / rollouts).toFixed(1);
  const list = (title: string, entries: Array<[string, number]>, busy: number) => {
    lines.push(`    ${title}:`);
    for (const [name, ms] of entries.slice(0, top))
      lines.push(
        `      ${perRollout(ms).padStart(7)} µs/rollout ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${name}`,
      );
  };
  for (const t of threads) {
    if (t.busyMs < 1) continue;
    lines.push(
      `  thread ${t.thread}: ${perRollout(t.busyMs)} µs/rollout sampled busy (wall-clock samples; ${t.idleMs.toFixed(0)} ms idle)`,
    );
    list('self time by module', t.selfByModule, t.busyMs);
    list('self time by function', t.selfByFunction, t.busyMs);
    list(
      "inclusive time by the project's modules",
      t.inclusiveByModule.filter(([m]) => ownModule(m)),
      t.busyMs,
    );
    list("inclusive time by the project's functions", t.inclusiveByFunction, t.busyMs);
  }
  return lines;
}
