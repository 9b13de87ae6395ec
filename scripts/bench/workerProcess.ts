import { existsSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnWorkerProcess, stopProcess } from '../lib/workerProcess';

// The durable side of the bench runs in a real worker process (`pivot-miner worker`), so its peak
// RSS can be read from the kernel (VmHWM) without the bench's own memory in the figure.

export interface BenchWorker {
  pid: number;
  /** Peak resident set size of the worker so far, in bytes (Linux /proc/<pid>/status VmHWM). */
  peakRssBytes(): number;
  /**
   * Starts the peak over from the current RSS (Linux clear_refs 5), so a peak read later belongs to
   * what ran since, not to the start-up (bundling the workflows peaks higher than a small run).
   */
  resetPeakRss(): void;
  /** Resident set size now, in bytes (VmRSS); 0 once the worker has exited. */
  rssBytes(): number;
  /** Live heap samples (after a forced full GC) when started with `heapProbePath`; empty otherwise. */
  heapSamples(): HeapSample[];
  /** Rejects if the worker exits before stop(), so a bench waiting on it fails instead of hanging. */
  exited: Promise<never>;
  stop(): Promise<void>;
}

/** The worker died before the bench stopped it; `outOfMemory` when its log ends with V8's heap-limit crash. */
export class WorkerExitedError extends Error {
  constructor(
    readonly pid: number,
    readonly logPath: string,
    readonly outOfMemory: boolean,
  ) {
    super(`worker ${pid} exited unexpectedly${outOfMemory ? ': JavaScript heap out of memory' : ''}; see ${logPath}`);
    this.name = 'WorkerExitedError';
  }
}

function endsOutOfMemory(logPath: string): boolean {
  const size = statSync(logPath).size;
  const tail = readFileSync(logPath)
    .subarray(Math.max(0, size - 64 * 1024))
    .toString('utf8');
  return tail.includes('JavaScript heap out of memory');
}

export interface HeapSample {
  t: number;
  heapUsed: number;
  external: number;
  rss: number;
}

function statusKb(pid: number, field: string): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]);
}

export interface BenchWorkerOptions {
  temporalAddress: string;
  taskQueue: string;
  artifactsRoot: string;
  logPath: string;
  /** V8 old-space cap in MB (PIVOT_MINER_WORKER_HEAP_MB); unset = the product's default, 0 = Node's own. */
  maxOldSpaceMb?: number;
  /** Further node flags for the worker (`--heapsnapshot-near-heap-limit=1`, `--require` of a probe, ...), for digging into a figure. */
  nodeOptions?: string;
  /** Where heapProbe.cjs appends the worker's live heap; unset = no probe. */
  heapProbePath?: string;
  /** Where cpuProfile.cjs writes the worker's CPU profiles; unset = no profiler. */
  cpuProfileDir?: string;
}

export function startBenchWorker(opts: BenchWorkerOptions): BenchWorker {
  // The worker's own log goes to a file: the bench prints figures, and a failure points at the log.
  const logFd = openSync(opts.logPath, 'a');
  const env: Record<string, string> = {};
  const nodeOptions = [
    process.env.NODE_OPTIONS,
    opts.heapProbePath !== undefined
      ? `--expose-gc --require ${path.join(__dirname, '../diagnostics/heapProbe.cjs')}`
      : undefined,
    opts.cpuProfileDir !== undefined ? `--require ${path.join(__dirname, '../diagnostics/cpuProfile.cjs')}` : undefined,
    opts.nodeOptions,
  ];
  if (nodeOptions.some((o) => o !== undefined))
    env.NODE_OPTIONS = nodeOptions
      .filter((o) => o !== undefined)
      .join(' ')
      .trim();
  if (opts.heapProbePath !== undefined) env.PIVOT_BENCH_HEAP_PROBE = opts.heapProbePath;
  if (opts.cpuProfileDir !== undefined) env.PIVOT_MINER_CPU_PROFILE_DIR = opts.cpuProfileDir;
  if (opts.maxOldSpaceMb !== undefined) env.PIVOT_MINER_WORKER_HEAP_MB = String(opts.maxOldSpaceMb);
  const child = spawnWorkerProcess({ ...opts, env, stdio: ['ignore', logFd, logFd] });
  if (child.pid === undefined) throw new Error('could not start a worker process');
  const pid = child.pid;
  let stopping = false;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<never>((_resolve, reject) =>
    child.once('exit', () => {
      if (!stopping) reject(new WorkerExitedError(pid, opts.logPath, endsOutOfMemory(opts.logPath)));
    }),
  );
  exited.catch(() => undefined);
  return {
    pid,
    peakRssBytes: () => {
      if (gone()) throw new Error(`worker ${pid} exited before its memory was read`);
      return statusKb(pid, 'VmHWM') * 1024;
    },
    resetPeakRss: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    rssBytes: () => (gone() ? 0 : statusKb(pid, 'VmRSS') * 1024),
    heapSamples: () =>
      opts.heapProbePath && existsSync(opts.heapProbePath)
        ? readFileSync(opts.heapProbePath, 'utf8')
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as HeapSample)
        : [],
    exited,
    async stop() {
      stopping = true;
      await stopProcess(child);
    },
  };
}
