import path from 'node:path';
import { ForgetfulMount } from '../forgetfulFs/mount';
import { WorkerPool } from './workers';

// A worker host whose power can be cut: its artifacts root is a forgetful-fs mount, its workers run
// on it. A cut SIGKILLs every worker of the host, drops what was not fsynced, remounts and starts the
// workers again, as a host does when the power comes back. Temporal is elsewhere and keeps running.

export interface PowerHostOptions {
  name: string;
  workers: number;
  temporalAddress: string;
  baseDir: string;
}

export class PowerHost {
  private pool: WorkerPool | undefined;
  private exitsOfOldPools = 0;
  cuts = 0;

  private constructor(
    private readonly opts: PowerHostOptions,
    private mount: ForgetfulMount,
    private readonly binary: string,
  ) {
    this.pool = this.startWorkers();
  }

  static async start(opts: PowerHostOptions, binary: string): Promise<PowerHost> {
    const mount = await ForgetfulMount.start(PowerHost.dirs(opts), binary);
    return new PowerHost(opts, mount, binary);
  }

  private static dirs(opts: PowerHostOptions) {
    return {
      backing: path.join(opts.baseDir, `${opts.name}.disk`),
      mountPoint: path.join(opts.baseDir, opts.name),
      control: path.join(opts.baseDir, `${opts.name}.ctl`),
    };
  }

  get artifactsRoot(): string {
    return this.mount.dirs.mountPoint;
  }

  get fs(): ForgetfulMount {
    return this.mount;
  }

  private startWorkers(): WorkerPool {
    return new WorkerPool({
      size: this.opts.workers,
      temporalAddress: this.opts.temporalAddress,
      taskQueue: `chaos-${this.opts.name}`,
      artifactsRoot: this.artifactsRoot,
      baseDir: this.opts.baseDir,
      logFile: path.join(this.opts.baseDir, `workers-${this.opts.name}.log`),
    });
  }

  /** Workers that died on their own, not by a cut. */
  get unexpectedExits(): number {
    return this.exitsOfOldPools + (this.pool?.unexpectedExits ?? 0);
  }

  private async stopWorkers(): Promise<void> {
    await this.pool?.stop();
    this.exitsOfOldPools += this.pool?.unexpectedExits ?? 0;
    this.pool = undefined;
  }

  /** SIGKILL every worker, cut the power, remount, restart the workers. */
  async cut(): Promise<void> {
    await this.stopWorkers();
    await this.mount.cut();
    this.cuts++;
    this.mount = await ForgetfulMount.start(PowerHost.dirs(this.opts), this.binary);
    this.pool = this.startWorkers();
  }

  /** Stops the workers and unmounts cleanly; safe after any failure. */
  async stop(): Promise<void> {
    await this.stopWorkers();
    await this.mount.unmount();
  }
}
