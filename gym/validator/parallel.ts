// Worker threads for the validator's fast path (the `threads` option). Each thread, the calling one
// included, opens the file itself and claims chunks (gym/validator/chunks.ts) one at a time from a
// shared counter, so no line's bytes ever cross between threads and a slower thread (one still
// starting) simply claims fewer. Workers answer with a chunk's small verdicts, never a parsed row;
// the caller consumes chunks in file order, so the first failure and the metrics are those of a
// sequential run.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { checkChunk, chunkCount, type ChunkVerdicts } from './chunks';
import type { FastRowOptions } from './fastRows';
import { JsonlFile } from './jsonlLines';

/** Tells a worker started on this module from any other load of it. */
const WORKER_ROLE = 'pivot-miner validator fast-path worker';

interface WorkerJob {
  role: typeof WORKER_ROLE;
  path: string;
  /** The size the chunks were planned on. */
  fileSize: number;
  /** One Int32: the next chunk to claim. */
  claims: SharedArrayBuffer;
  options: FastRowOptions;
}

/** Claims the next chunk; past the last one once there are none left or the run has stopped. */
const claim = (claims: Int32Array) => Atomics.add(claims, 0, 1);

/** The worker's side: checks chunks until none are left, posting each one's verdicts. */
function serveChunks(job: WorkerJob): void {
  const file = new JsonlFile(job.path);
  try {
    const claims = new Int32Array(job.claims);
    const chunks = chunkCount(job.fileSize);
    for (let index = claim(claims); index < chunks; index = claim(claims)) {
      parentPort?.postMessage(checkChunk(file, index, job.fileSize, job.options));
    }
  } finally {
    file.close();
  }
}

const job = workerData as Partial<WorkerJob> | null;
if (!isMainThread && job?.role === WORKER_ROLE) serveChunks(job as WorkerJob);

/** What a worker runs: `script` (this module, or a bundle with it), through tsx when TypeScript. */
function workerSource(script: string): string {
  const load = `require(${JSON.stringify(script)});`;
  return script.endsWith('.ts') ? `require(${JSON.stringify(require.resolve('tsx/cjs'))}); ${load}` : load;
}

/** Far past any chunk index, so every later claim comes back past the last chunk. */
const STOPPED = 1 << 30;

/**
 * The chunks of one file, claimed by `threads` threads: the calling one (through claim()) and
 * `threads - 1` workers, started here. `script` is the file the workers load: by default the one
 * this module is in, whatever bundles it.
 */
export class ChunkThreads {
  readonly chunks: number;
  private readonly claims = new Int32Array(new SharedArrayBuffer(4));
  private readonly workers: Worker[] = [];
  private readonly arrived = new Map<number, ChunkVerdicts>();
  private running = 0;
  private failure: Error | undefined;
  /** Called when a chunk arrives, a worker stops or one fails. */
  private wake: (() => void) | undefined;

  constructor(path: string, fileSize: number, threads: number, options: FastRowOptions, script: string = __filename) {
    this.chunks = chunkCount(fileSize);
    // A worker takes a while to start: the calling thread claims the first chunk before any exists.
    const workers = Math.min(threads, this.chunks) - 1;
    if (workers <= 0) return;
    const source = workerSource(script);
    const job: WorkerJob = { role: WORKER_ROLE, path, fileSize, claims: this.claims.buffer as SharedArrayBuffer, options };
    for (let i = 0; i < workers; i++) {
      const worker = new Worker(source, { eval: true, execArgv: [], workerData: job });
      this.running++;
      worker.on('message', (verdicts: ChunkVerdicts) => {
        this.arrived.set(verdicts.index, verdicts);
        this.wake?.();
      });
      worker.on('error', (error) => {
        this.failure ??= error;
        this.wake?.();
      });
      worker.on('exit', () => {
        this.running--;
        this.wake?.();
      });
      this.workers.push(worker);
    }
  }

  /** The next chunk for the calling thread to check, or undefined when none is left. */
  claim(): number | undefined {
    const index = claim(this.claims);
    return index < this.chunks ? index : undefined;
  }

  /** Lets the workers' messages in (they arrive between turns of the event loop); undefined when
   * no worker is running. */
  async receive(): Promise<void> {
    if (this.workers.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** A chunk a worker checked, once it has arrived; undefined when no worker will deliver it (it
   * was not claimed by one, or the workers are gone), for the caller to check it itself. */
  async take(index: number): Promise<ChunkVerdicts | undefined> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      const verdicts = this.arrived.get(index);
      if (verdicts !== undefined) {
        this.arrived.delete(index);
        return verdicts;
      }
      if (this.running === 0) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  /** Whether a worker has already delivered `index` (take() then answers at once). */
  has(index: number): boolean {
    return this.arrived.has(index);
  }

  async close(): Promise<void> {
    Atomics.store(this.claims, 0, STOPPED);
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
