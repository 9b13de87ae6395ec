import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { bounded } from '../lib/bounded';

// Drives forgetful-fs (main.go): mounts it, talks to its control socket, and makes sure no mount
// outlives the harness that made it. A power cut ends the process after rebuilding the backing
// directory; remounting is a new ForgetfulMount on the same directories.

const repoRoot = path.resolve(__dirname, '../..');
/**
 * Every command answers at once but a cut or an unmount, which the daemon itself gives up after 30 s
 * (main.go's stopTimeout) with a diagnosis: past this bound the daemon has hung outside its own watch.
 */
const COMMAND_TIMEOUT_MS = 60_000;
/** Mounting scans the backing directory; exiting follows the answer to a cut at once. */
const START_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 10_000;
/** How much of the daemon's stderr is kept for an error: a goroutine dump fits. */
const STDERR_KEPT = 256 * 1024;

/** The built binary: $FORGETFUL_FS_BIN, or built once into the cache by scripts/ensure-forgetful-fs.sh. */
export function forgetfulFsBinary(): string {
  const fromEnv = process.env.FORGETFUL_FS_BIN;
  if (fromEnv) return fromEnv;
  return execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-forgetful-fs.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export const fsStatsSchema = z.object({
  writes: z.number(),
  bytes_written: z.number(),
  fsyncs: z.number(),
  fsyncdirs: z.number(),
  enospc: z.number(),
  eio: z.number(),
});
export type FsStats = z.infer<typeof fsStatsSchema>;

export type FsOp =
  'create' | 'mkdir' | 'symlink' | 'rename' | 'unlink' | 'rmdir' | 'setattr' | 'write' | 'fsync' | 'fsyncdir' | 'any';

export interface MountDirs {
  /** Where the live state lives (a directory on a real disk). */
  backing: string;
  mountPoint: string;
  /** The control socket's path. */
  control: string;
}

export function isMounted(mountPoint: string): boolean {
  const resolved = path.resolve(mountPoint);
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === resolved);
}

export class ForgetfulMount {
  private readonly lines: AsyncIterator<string>;
  private readonly waiting: Array<(line: string) => void> = [];
  private fired: ((where: string) => void) | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly dirs: MountDirs,
    private readonly child: ChildProcess,
    private readonly socket: net.Socket,
    private readonly stderr: () => string,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    this.lines = createInterface({ input: socket })[Symbol.asyncIterator]();
    void this.route();
  }

  /** Mounts `dirs.backing` at `dirs.mountPoint`; what is there now counts as durable. */
  static async start(dirs: MountDirs, binary = forgetfulFsBinary()): Promise<ForgetfulMount> {
    mkdirSync(dirs.backing, { recursive: true });
    mkdirSync(dirs.mountPoint, { recursive: true });
    const args = ['-backing', dirs.backing, '-mount', dirs.mountPoint, '-control', dirs.control];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT)));
    const ready = new Promise<boolean>((resolve) => {
      child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().startsWith('ready')));
      child.once('exit', () => resolve(false));
    });
    const what = `forgetful-fs mounting ${dirs.mountPoint}`;
    if (!(await bounded(ready, START_TIMEOUT_MS, what).catch(() => false))) {
      child.kill('SIGKILL');
      throw new Error(`forgetful-fs did not mount ${dirs.mountPoint}: ${stderr.trim() || 'no output'}`);
    }
    const socket = net.connect(dirs.control);
    const connected = new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    await bounded(connected, START_TIMEOUT_MS, `connecting to ${dirs.control}`).catch((err: unknown) => {
      socket.destroy();
      child.kill('SIGKILL');
      throw err;
    });
    return new ForgetfulMount(dirs, child, socket, () => stderr);
  }

  private async route(): Promise<void> {
    for (;;) {
      const next = await this.lines.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) break;
      const line = next.value;
      if (line.startsWith('fired ')) this.fired?.(line.slice('fired '.length));
      else this.waiting.shift()?.(line);
    }
    for (const resolve of this.waiting.splice(0)) resolve('error: forgetful-fs closed its control socket');
  }

  /**
   * Sends one control command and waits for its answer, for at most `timeoutMs`: a daemon that stops
   * answering must not hang the harness. One that does is sent SIGQUIT, which makes a Go program
   * print every goroutine's stack, and the error carries that dump: it says what the daemon waits for.
   */
  private async command(line: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
    const verb = line.split(' ')[0]!;
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.socket.write(`${line}\n`);
    const text = await bounded(answer, timeoutMs, `forgetful-fs ${verb}`).catch(async (err: Error) => {
      this.child.kill('SIGQUIT');
      await bounded(this.exited, EXIT_TIMEOUT_MS, 'forgetful-fs after SIGQUIT').catch(() => undefined);
      return `error: ${err.message}\n${this.stderr()}`;
    });
    if (text.startsWith('error:')) {
      // A cut or unmount that gave up wrote its diagnosis to stderr.
      const diagnosis = verb === 'cut' || verb === 'unmount' ? `\n${this.stderr()}` : '';
      throw new Error(`forgetful-fs ${verb}: ${text.slice(7)}${diagnosis}`);
    }
    return text;
  }

  /**
   * Freezes the filesystem at the nth operation `op` whose path matches `pattern` (a rename's path is
   * "from -> to"), before or after it runs. `fired` resolves with "<op> <path>" when it fires; every
   * later changing operation then blocks until the cut (or until its caller is killed).
   */
  async arm(when: 'before' | 'after', op: FsOp, nth: number, pattern: string): Promise<{ fired: Promise<string> }> {
    const fired = new Promise<string>((resolve) => (this.fired = resolve));
    await this.command(`arm ${when} ${op} ${nth} ${pattern}`);
    return { fired };
  }

  /**
   * Drops the armed trigger. True when it fired meanwhile (the filesystem is frozen at its point, and
   * only a cut lets the host go on).
   */
  async disarm(): Promise<boolean> {
    return (await this.command('disarm')) === 'frozen';
  }

  /** After `bytes` more bytes, writes fail with ENOSPC `enospcCount` times, then with EIO. */
  async fill(bytes: number, enospcCount: number): Promise<void> {
    await this.command(`fill ${bytes} ${enospcCount}`);
  }

  async free(): Promise<void> {
    await this.command('free');
  }

  async stats(): Promise<FsStats> {
    return fsStatsSchema.parse(JSON.parse(await this.command('stats')));
  }

  /** Power cut: the backing directory keeps only what was fsynced (and directories fsynced). */
  async cut(): Promise<void> {
    await this.command('cut');
    await bounded(this.exited, EXIT_TIMEOUT_MS, 'forgetful-fs exiting after its cut');
  }

  /** A clean unmount: everything written is kept. Safe to call after cut() or a failure. */
  async unmount(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      await this.command('unmount').catch(() => this.child.kill('SIGTERM'));
      await bounded(this.exited, EXIT_TIMEOUT_MS, 'forgetful-fs exiting').catch(() => this.child.kill('SIGKILL'));
      // A process asleep in the kernel does not die even of SIGKILL: say so rather than wait for ever.
      await bounded(this.exited, EXIT_TIMEOUT_MS, `forgetful-fs (pid ${this.child.pid}) exiting after SIGKILL`);
    }
    this.socket.destroy();
    // A daemon killed with the mount still up leaves it dangling: detach it, nothing may outlive us.
    if (isMounted(this.dirs.mountPoint)) execFileSync('umount', ['-l', this.dirs.mountPoint]);
  }
}
