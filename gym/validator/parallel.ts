// Worker threads for the validator's fast path (the `threads` option). Each thread, the calling one
// included, opens the file itself and claims chunks (gym/validator/chunks.ts) one at a time from a
// shared counter, so no line's bytes ever cross between threads and a slower thread (one still
// starting) simply claims fewer. Workers answer with a chunk's small verdicts, never a parsed row;
// the caller consumes chunks in file order, so the first failure and the metrics are those of a
// sequential run. The workers start on a job (file and options) before the caller takes a chunk,
// which lets the CLI start them on its guess of the job before it has loaded the command
// (scripts/commands/validateEarly.ts); the validator keeps them only if the guess was right.
import { availableParallelism } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { checkChunk, chunkCount, type ChunkVerdicts } from './chunks';
import type { FastRowOptions } from './fastRows';
import { JsonlFile } from './jsonlLines';

/** What the threads check: a file, by the size the chunks are planned on, with these options. */
export interface ChunkJob {
  path: string;
  fileSize: number;
  options: FastRowOptions;
}

/** Tells a worker started on this module from any other load of it. */
const WORKER_ROLE = 'pivot-miner validator fast-path worker';

interface WorkerData {
  role: typeof WORKER_ROLE;
  job: ChunkJob;
  /** One Int32: the next chunk to claim. */
  claims: SharedArrayBuffer;
}

/** Claims the next chunk; past the last one once there are none left or the run has stopped. */
const claim = (claims: Int32Array) => Atomics.add(claims, 0, 1);

/** The worker's side: checks chunks until none are left, posting each one's verdicts. */
function serveChunks({ job, claims: shared }: WorkerData): void {
  const file = new JsonlFile(job.path);
  try {
    const claims = new Int32Array(shared);
    const chunks = chunkCount(job.fileSize);
    for (let index = claim(claims); index < chunks; index = claim(claims)) {
      parentPort?.postMessage(checkChunk(file, index, job.fileSize, job.options));
    }
  } finally {
    file.close();
  }
}

const data = workerData as Partial<WorkerData> | null;
if (!isMainThread && data?.role === WORKER_ROLE) serveChunks(data as WorkerData);

/** A worker's node options: none for a bundle; for this module's source (only tests pass it), those
 * of the calling process, which loads TypeScript (node --import tsx). */
const workerExecArgv = (script: string): string[] | undefined => (script.endsWith('.ts') ? undefined : []);

/** Below this a file is checked on one thread: starting a worker costs about what a thread checks
 * of a few MiB. */
const MIN_BYTES_PER_EXTRA_THREAD = 4 << 20;

/** Every available core for a large file, fewer for a smaller one, one for a small file. */
export function defaultThreads(fileSize: number): number {
  return Math.max(1, Math.min(availableParallelism(), Math.floor(fileSize / MIN_BYTES_PER_EXTRA_THREAD)));
}

/** Far past any chunk index, so every later claim comes back past the last chunk. */
const STOPPED = 1 << 30;

/**
 * The chunks of one job, claimed by `threads` threads: the calling one (through claim()) and
 * `threads - 1` workers on `script` (this module, or a bundle with it), started here.
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

  constructor(
    readonly job: ChunkJob,
    readonly threads: number,
    script: string = __filename,
  ) {
    this.chunks = chunkCount(job.fileSize);
    const data: WorkerData = { role: WORKER_ROLE, job, claims: this.claims.buffer as SharedArrayBuffer };
    for (let i = 1; i < Math.min(threads, this.chunks); i++) {
      const worker = new Worker(script, { execArgv: workerExecArgv(script), workerData: data });
      this.running++;
      // Listening from the start: a worker may deliver before the caller asks.
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

  /** Whether these threads are at work on `job` with `threads` threads. */
  runs(job: ChunkJob, threads: number): boolean {
    return threads === this.threads && isDeepStrictEqual(job, this.job);
  }

  /** The next chunk for the calling thread to check, or undefined when none is left. */
  claim(): number | undefined {
    const index = claim(this.claims);
    return index < this.chunks ? index : undefined;
  }

  /** A turn of the event loop, between chunks: lets the workers' messages in, and whatever else
   * the process runs (a Temporal worker's activities) go on while a large file is checked here. */
  async receive(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
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
