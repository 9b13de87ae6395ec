// Worker threads for the validator's fast path (the `threads` option). Scanning is most of the
// work and lines are independent, so batches go to the least busy worker (or, all busy, are checked
// on the calling thread), and workers answer with one
// small verdict per line (a row summary or "exact path"), never a parsed row; the caller consumes
// the outcomes in file order, so the first failure and the metrics are those of a sequential run.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { acceptLineFast, type LineOutcome } from './fastRows';
import type { RawLine } from './jsonlLines';
import type { RowCheckOptions } from './rowChecks';

/** Tells a worker started on this module from any other load of it. */
const WORKER_ROLE = 'pivot-miner validator fast-path worker';

/** One batch as it crosses to a worker: the lines' bytes back to back, in one transferred buffer. */
export interface LineBatch {
  id: number;
  bytes: Uint8Array<ArrayBuffer>;
  /** Line i is bytes[offsets[i], offsets[i + 1]). */
  offsets: Int32Array;
  terminated: Uint8Array;
}

function toBatch(id: number, lines: readonly RawLine[]): LineBatch {
  const offsets = new Int32Array(lines.length + 1);
  const terminated = new Uint8Array(lines.length);
  lines.forEach((line, i) => {
    offsets[i + 1] = offsets[i] + line.bytes.length;
    terminated[i] = line.terminated ? 1 : 0;
  });
  // A buffer of its own (not Buffer's shared pool), since it is handed over to the worker.
  const bytes = new Uint8Array(offsets[lines.length]);
  lines.forEach((line, i) => bytes.set(line.bytes, offsets[i]));
  return { id, bytes, offsets, terminated };
}

/** What a worker runs: `script` (this module, or a bundle with it), through tsx when TypeScript. */
function workerSource(script: string): string {
  const load = `require(${JSON.stringify(script)});`;
  return script.endsWith('.ts') ? `require(${JSON.stringify(require.resolve('tsx/cjs'))}); ${load}` : load;
}

/** The worker's side: decodes, scans and checks the lines of one batch at a time. */
function serveBatches(options: RowCheckOptions): void {
  parentPort?.on('message', (batch: LineBatch) => {
    const bytes = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
    const outcomes: LineOutcome[] = [];
    for (let i = 0; i < batch.terminated.length; i++) {
      outcomes.push(acceptLineFast(bytes.subarray(batch.offsets[i], batch.offsets[i + 1]), batch.terminated[i] === 1, options));
    }
    parentPort?.postMessage({ id: batch.id, outcomes });
  });
}

const role = workerData as { role?: unknown; options?: RowCheckOptions } | null;
if (!isMainThread && role?.role === WORKER_ROLE && role.options !== undefined) serveBatches(role.options);

/** Batches a worker may have waiting before the calling thread checks the next one itself. Two keep
 * a worker busy (one in hand, one queued) without leaving the caller idle behind a slower worker
 * (one still starting, or not yet optimized). */
const MAX_QUEUED = 2;

export class FastRowWorkers {
  private readonly workers: Array<{ thread: Worker; queued: number }>;
  private readonly waiting = new Map<number, { resolve: (outcomes: LineOutcome[]) => void; reject: (error: Error) => void }>();
  private nextId = 0;

  /** `count` threads in all: the calling thread checks batches itself whenever the workers have
   * enough queued, so one worker fewer has to start. `options` without `checkAgentName`: a
   * function cannot cross to a thread; the caller applies it. `script` is the file the workers load:
   * by default the one this module is in, whatever bundles it. */
  constructor(count: number, private readonly options: Omit<RowCheckOptions, 'checkAgentName'>, script: string = __filename) {
    const source = workerSource(script);
    this.workers = Array.from({ length: count - 1 }, () => {
      const entry = { thread: new Worker(source, { eval: true, execArgv: [], workerData: { role: WORKER_ROLE, options } }), queued: 0 };
      entry.thread.on('message', ({ id, outcomes }: { id: number; outcomes: LineOutcome[] }) => {
        entry.queued--;
        this.waiting.get(id)?.resolve(outcomes);
        this.waiting.delete(id);
      });
      entry.thread.on('error', (error) => this.failAll(error));
      return entry;
    });
  }

  private failAll(error: Error): void {
    for (const { reject } of this.waiting.values()) reject(error);
    this.waiting.clear();
  }

  get size(): number {
    return this.workers.length + 1;
  }

  /** The outcomes of `lines`, from the least busy worker, or from this thread when all are busy. */
  check(lines: readonly RawLine[]): Promise<LineOutcome[]> {
    const id = this.nextId++;
    let worker = this.workers[0];
    for (const candidate of this.workers) if (candidate.queued < (worker?.queued ?? 0)) worker = candidate;
    if (worker === undefined || worker.queued >= MAX_QUEUED) {
      return Promise.resolve(lines.map((line) => acceptLineFast(line.bytes, line.terminated, this.options)));
    }
    const { thread } = worker;
    worker.queued++;
    const batch = toBatch(id, lines);
    const outcomes = new Promise<LineOutcome[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      thread.postMessage(batch, [batch.bytes.buffer]);
    });
    // The caller awaits batches in order and may stop early; a failure of one it never reaches must
    // not surface as an unhandled rejection.
    outcomes.catch(() => undefined);
    return outcomes;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ thread }) => thread.terminate()));
  }
}
