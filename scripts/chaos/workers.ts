import type { ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { bounded } from '../lib/bounded';
import { spawnWorkerProcess } from '../lib/workerProcess';

// Worker child processes (`pivot-miner worker`) for one task queue and artifacts root. Killing one
// kills the embedded simulators inside it too; its replacement starts fresh ones on new ports.

export interface WorkerPoolOptions {
  size: number;
  temporalAddress: string;
  taskQueue: string;
  artifactsRoot: string;
  baseDir: string;
  logFile: string;
}

/** A SIGKILLed process is gone in well under a second unless the kernel holds it. */
const KILL_TIMEOUT_MS = 30_000;

/** Where each thread of `pid` sleeps in the kernel, for a process that would not die. */
function kernelStacks(pid: number): string {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '(unreadable)\n';
    }
  };
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return '(gone)';
  }
  return tasks.map((tid) => `task ${tid}:\n${read(`/proc/${pid}/task/${tid}/stack`)}`).join('');
}

export class WorkerPool {
  private readonly workers: ChildProcess[] = [];
  private readonly log: WriteStream;
  /** Workers that exited without being killed by the pool (a crash the chaos run did not cause). */
  unexpectedExits = 0;
  kills = 0;

  constructor(private readonly opts: WorkerPoolOptions) {
    this.log = createWriteStream(opts.logFile, { flags: 'a' });
    for (let i = 0; i < opts.size; i++) this.workers.push(this.spawnWorker(i));
  }

  private spawnWorker(slot: number): ChildProcess {
    const child = spawnWorkerProcess({
      temporalAddress: this.opts.temporalAddress,
      taskQueue: this.opts.taskQueue,
      artifactsRoot: this.opts.artifactsRoot,
      baseDir: this.opts.baseDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    child.once('exit', (code, signal) => {
      if (this.workers[slot] !== child) return;
      // A worker that dies on its own is restarted too, but counted: the run must not depend on it.
      this.unexpectedExits++;
      this.log.write(`[chaos] worker slot ${slot} exited on its own (code ${code}, signal ${signal}); restarting\n`);
      this.workers[slot] = this.spawnWorker(slot);
    });
    return child;
  }

  /** SIGKILLs the worker in `slot` and starts a replacement right away. */
  async kill(slot: number): Promise<void> {
    const child = this.workers[slot]!;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.workers[slot] = this.spawnWorker(slot);
    child.kill('SIGKILL');
    await exited;
    this.kills++;
  }

  get size(): number {
    return this.workers.length;
  }

  /**
   * SIGKILLs every worker and waits for them to exit, for a bounded time: a process asleep in the
   * kernel (on a FUSE request its filesystem never answers) outlives SIGKILL, and the error then
   * names it with its kernel stack.
   */
  async stop(): Promise<void> {
    const all = this.workers.splice(0);
    await Promise.all(
      all
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map(async (child) => {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await bounded(exited, KILL_TIMEOUT_MS, `worker pid ${child.pid} exiting after SIGKILL`).catch(
            (err: Error) => {
              throw new Error(`${err.message}; its kernel stacks:\n${kernelStacks(child.pid!)}`);
            },
          );
        }),
    );
    this.log.end();
  }
}
