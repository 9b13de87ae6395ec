import { appendFile, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { renameSynced, syncFile } from '../gym/durable';

// Fencing of shared writes (docs/fencing.md). A partitioned worker is not dead: an attempt Temporal
// has given up on may keep running and writing after its successor started. Every attempt of a
// fenced step writes only files of its own, named by its token, in the step's fence directory; the
// newest token present there is the step's current attempt. An older attempt that sees a newer token
// stops with a non-retryable "superseded" failure, and the newer attempt removes the older one's
// files, so whatever the older one still writes goes to files no path names any more.

/** An activity attempt, ordered by when Temporal scheduled the activity and then by attempt number. */
export interface AttemptToken {
  scheduledMs: number;
  attempt: number;
  /** `<scheduledMs>-<attempt>`: the prefix of every file the attempt writes in a fence directory. */
  name: string;
}

export function attemptToken(scheduledMs: number, attempt: number): AttemptToken {
  return { scheduledMs, attempt, name: `${scheduledMs}-${attempt}` };
}

/**
 * This activity attempt's token. Attempts of one activity share its scheduled time and count up; a
 * step Temporal schedules later (the next merge, a chunk of a reset workflow) is scheduled later by
 * the server's clock. Outside an activity (scripts calling a stage directly) it is an attempt
 * scheduled now.
 */
export function currentAttempt(): AttemptToken {
  let info: { scheduledTimestampMs: number; attempt: number } | undefined;
  try {
    info = Context.current().info;
  } catch {
    info = undefined;
  }
  return info ? attemptToken(info.scheduledTimestampMs, info.attempt) : attemptToken(Date.now(), 1);
}

export function parseToken(entry: string): AttemptToken | undefined {
  const m = /^(\d+)-(\d+)(?=[._]|$)/.exec(entry);
  return m ? attemptToken(Number(m[1]), Number(m[2])) : undefined;
}

export const compareTokens = (a: AttemptToken, b: AttemptToken): number =>
  a.scheduledMs - b.scheduledMs || a.attempt - b.attempt;

/** The failure type of an attempt that found a newer one; non-retryable: a retry keeps the activity's scheduled time, so it would be superseded too. */
export const SUPERSEDED = 'Superseded';

export function isSuperseded(err: unknown): boolean {
  return err instanceof ApplicationFailure && err.type === SUPERSEDED;
}

/** How old the last look at the fence may be before a write looks again: longer than this, the process was paused. */
const FRESH_MS = 2000;

export class Fence {
  private newer: AttemptToken | undefined;
  private checkedAt = 0;

  constructor(
    readonly dir: string,
    readonly token: AttemptToken,
    /** What is fenced, for messages: "chunk 3 of /runs/x/rollouts". */
    private readonly what: string,
  ) {}

  /** The entries of the fence directory that belong to an attempt, with its token. */
  async entries(): Promise<Array<{ entry: string; token: AttemptToken }>> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: Array<{ entry: string; token: AttemptToken }> = [];
    for (const entry of names) {
      const token = parseToken(entry);
      if (token) out.push({ entry, token });
    }
    return out;
  }

  /** Looks at the directory again: one readdir of a directory of a few entries. */
  async refresh(): Promise<void> {
    for (const { token } of await this.entries()) {
      if (compareTokens(token, this.token) > 0 && (!this.newer || compareTokens(token, this.newer) > 0))
        this.newer = token;
    }
    this.checkedAt = Date.now();
  }

  /** Throws the superseded failure when a newer attempt has started; looks first. */
  async check(): Promise<void> {
    await this.refresh();
    this.assertCurrent();
  }

  /**
   * After a step failed: the superseded failure when a newer attempt has started, since its removal
   * of this attempt's files is then what failed the step (a file gone, a directory not empty).
   */
  async explain(err: unknown): Promise<unknown> {
    if (isSuperseded(err)) return err;
    try {
      await this.check();
    } catch (superseded) {
      return superseded;
    }
    return err;
  }

  /**
   * Before a write: the verdict of the last look (the heartbeat refreshes it), looked at again first
   * when it is stale, since a process paused long enough to be superseded wakes up here. Returns a
   * promise only when it looks again, so the usual write costs a clock read and no promise.
   */
  beforeWrite(): Promise<void> | undefined {
    if (Date.now() - this.checkedAt > FRESH_MS) return this.check();
    this.assertCurrent();
    return undefined;
  }

  assertCurrent(): void {
    if (!this.newer) return;
    throw ApplicationFailure.create({
      type: SUPERSEDED,
      nonRetryable: true,
      message: `${this.what}: attempt ${this.token.name} was superseded by attempt ${this.newer.name}, which owns the step's files now; this attempt stops without writing`,
    });
  }

  /**
   * Marks this attempt as started, for steps whose files are renamed away when they publish: the
   * marker stays until a newer attempt removes it, so an older attempt starting late still sees it.
   */
  async claim(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await appendFile(this.claimFile, '');
  }

  get claimFile(): string {
    return path.join(this.dir, `${this.token.name}.claim`);
  }

  /**
   * After creating its claim: when a newer attempt started meanwhile (it may have looked before this
   * claim existed), removes `files` again and throws, so a late attempt leaves nothing behind.
   */
  async checkClaimed(files: readonly string[]): Promise<void> {
    await this.refresh();
    if (!this.newer) return;
    for (const file of files) await rm(file, { recursive: true, force: true });
    this.assertCurrent();
  }

  /** Removes the files of older attempts (superseded: if still running, they write to files no path names). */
  async removeOlder(): Promise<void> {
    for (const { entry, token } of await this.entries()) {
      if (compareTokens(token, this.token) < 0) await rm(path.join(this.dir, entry), { recursive: true, force: true });
    }
  }

  /**
   * Moves this attempt's files to the names the run publishes, right after a look at the fence. The
   * files are synced before and their directories after, so what the step reports done is durable.
   */
  async publish(moves: ReadonlyArray<readonly [from: string, to: string]>): Promise<void> {
    try {
      for (const [from] of moves) await syncFile(from);
    } catch (err) {
      // A newer attempt removed this one's files: say so rather than what was missing.
      await this.check();
      throw err;
    }
    await this.check();
    await renameSynced(moves);
  }
}

/**
 * The fence of a stage's merge and finish steps, which the workflow runs one after another: partial
 * merged files and finish outputs are written there under the attempt's token until published.
 */
export function stageFence(outPrefix: string, token: AttemptToken = currentAttempt()): Fence {
  return new Fence(`${outPrefix}_shards/merge`, token, `merge of ${outPrefix}`);
}
