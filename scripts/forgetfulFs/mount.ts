import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';

// Drives forgetful-fs (main.go): mounts it, talks to its control socket, and makes sure no mount
// outlives the harness that made it. A power cut ends the process after rebuilding the backing
// directory; remounting is a new ForgetfulMount on the same directories.

const repoRoot = path.resolve(__dirname, '../..');
/** Every command answers at once but a cut, which rebuilds the backing directory: seconds at most. */
const COMMAND_TIMEOUT_MS = 60_000;

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
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
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
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = await new Promise<boolean>((resolve) => {
      child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().startsWith('ready')));
      child.once('exit', () => resolve(false));
    });
    if (!ready) {
      child.kill('SIGKILL');
      throw new Error(`forgetful-fs did not mount ${dirs.mountPoint}: ${stderr.trim() || 'no output'}`);
    }
    const socket = net.connect(dirs.control);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new ForgetfulMount(dirs, child, socket);
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
   * answering must not hang the harness's clean-up (unmount then falls back to signals).
   */
  private async command(line: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.socket.write(`${line}\n`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`error: no answer within ${timeoutMs / 1000} s`), timeoutMs);
    });
    const text = await Promise.race([answer, late]);
    clearTimeout(timer);
    if (text.startsWith('error:')) throw new Error(`forgetful-fs ${line.split(' ')[0]}: ${text.slice(7)}`);
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
    await this.exited;
  }

  /** A clean unmount: everything written is kept. Safe to call after cut() or a failure. */
  async unmount(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      await this.command('unmount').catch(() => this.child.kill('SIGTERM'));
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
    this.socket.destroy();
    // A daemon killed with the mount still up leaves it dangling: detach it, nothing may outlive us.
    if (isMounted(this.dirs.mountPoint)) execFileSync('umount', ['-l', this.dirs.mountPoint]);
  }
}
