import { open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirDurably, renameSynced, syncFile } from '../../gym/durable';
import { pauseAt } from '../run/testHooks';

// Fencing of shared writes (docs/fencing.md). A partitioned worker is not dead: an attempt Temporal
// has given up on may keep running and writing after its successor started. Every attempt of a
// fenced step claims a token in the step's fence directory and writes only files named by it; the
// newest token there is the step's current attempt. An older attempt that sees a newer token stops
// with a "superseded" failure, and the newer attempt removes the older one's files, so whatever the
// older one still writes goes to files no path names any more.

/**
 * An activity attempt in a fence directory. `seq` is taken in the directory by an exclusive create,
 * so no two attempts share a token, whatever Temporal's activity info says after a reset. `run`,
 * `attemptMs` and `attempt` say which workflow run scheduled the attempt and when Temporal scheduled
 * this attempt of it.
 */
export interface AttemptToken {
  seq: number;
  attemptMs: number;
  attempt: number;
  /** The workflow run id without dashes; `local` outside an activity. */
  run: string;
  /** `<seq>-<attemptMs>-<attempt>-<run>`: the prefix of every file the attempt writes in a fence directory. */
  name: string;
}

/** What an attempt knows of itself before it has a sequence number. */
export type AttemptIdentity = Omit<AttemptToken, 'seq' | 'name'>;

export function attemptToken(seq: number, identity: AttemptIdentity): AttemptToken {
  const { attemptMs, attempt, run } = identity;
  return { seq, attemptMs, attempt, run, name: `${seq}-${attemptMs}-${attempt}-${run}` };
}

/**
 * This activity attempt: its workflow run, and when Temporal scheduled this attempt (not the
 * activity: `temporal activity reset` restarts the attempt count but schedules the new attempt now).
 * Outside an activity (scripts calling a stage directly) it is an attempt scheduled now.
 */
export function currentAttempt(): AttemptIdentity {
  let info: Context['info'] | undefined;
  try {
    info = Context.current().info;
  } catch {
    info = undefined;
  }
  if (!info) return { attemptMs: Date.now(), attempt: 1, run: 'local' };
  return {
    attemptMs: info.currentAttemptScheduledTimestampMs,
    attempt: info.attempt,
    run: (info.workflowExecution?.runId ?? '').replace(/[^0-9a-zA-Z]/g, '') || 'local',
  };
}

export function parseToken(entry: string): AttemptToken | undefined {
  const m = /^(\d+)-(\d+)-(\d+)-([0-9a-zA-Z]+)(?=[._]|$)/.exec(entry);
  return m ? attemptToken(Number(m[1]), { attemptMs: Number(m[2]), attempt: Number(m[3]), run: m[4]! }) : undefined;
}

/** A sequence marker: `<seq>.seq`, created exclusively by the attempt that takes the number. */
const SEQ_MARKER = /^(\d+)\.seq$/;

/**
 * Whether `a` supersedes `b`. Within one workflow run, Temporal's order: the attempt it scheduled
 * later (a retry, an activity reset, the next step). Across runs (a workflow reset, a resumed run),
 * where Temporal reuses scheduled times and restarts attempt counts, the attempt that took its
 * sequence number later, i.e. started later.
 */
export function supersedes(a: AttemptToken, b: AttemptToken): boolean {
  return a.run === b.run ? (scheduledLater(a, b) || a.seq - b.seq) > 0 : a.seq > b.seq;
}

/** Within one run: how much later Temporal scheduled attempt `a` than `b` (0 for the same attempt, or two steps scheduled in the same millisecond). */
const scheduledLater = (a: AttemptIdentity, b: AttemptIdentity): number =>
  a.attemptMs - b.attemptMs || a.attempt - b.attempt;

/** The failure type of an attempt that found a newer one. */
export const SUPERSEDED = 'Superseded';

export function isSuperseded(err: unknown): boolean {
  return err instanceof ApplicationFailure && err.type === SUPERSEDED;
}

/** How old the last look at the fence may be before a write looks again: longer than this, the process was paused. */
const FRESH_MS = 2000;

export interface FenceEntry {
  entry: string;
  token: AttemptToken;
}

/** The entries of a fence directory that belong to an attempt, with its token; none when it does not exist. */
export async function fenceEntries(dir: string): Promise<FenceEntry[]> {
  const out: FenceEntry[] = [];
  for (const entry of await listDir(dir)) {
    const token = parseToken(entry);
    if (token) out.push({ entry, token });
  }
  return out;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The attempt no other attempt in the directory supersedes: the one that owns the step. */
export function newestToken(entries: readonly FenceEntry[]): AttemptToken | undefined {
  const tokens = entries.map(({ token }) => token);
  return tokens.find((t) => !tokens.some((other) => supersedes(other, t)));
}

export class Fence {
  private newer: AttemptToken | undefined;
  private checkedAt = 0;

  private constructor(
    readonly dir: string,
    readonly token: AttemptToken,
    /** What is fenced, for messages: "chunk 3 of /runs/x/rollouts". */
    private readonly what: string,
  ) {}

  /**
   * Claims a token in `dir` for this attempt: looks first, and stops creating nothing when an attempt
   * of the same run scheduled later is there (an attempt that starts after its successor leaves no
   * trace); takes the next sequence number by an exclusive create; leaves a `<token>.claim` marker
   * that stays until a newer attempt removes it; looks again, and withdraws when it was overtaken.
   */
  static async claim(dir: string, what: string, identity: AttemptIdentity = currentAttempt()): Promise<Fence> {
    const before = await fenceEntries(dir);
    const late = before.find(({ token }) => token.run === identity.run && scheduledLater(token, identity) > 0);
    if (late) throw supersededFailure(what, `${identity.attemptMs}-${identity.attempt}-${identity.run}`, late.token);
    await mkdirDurably(dir);
    const fence = new Fence(dir, await takeSequence(dir, identity), what);
    await open(fence.claimFile, 'w').then((h) => h.close());
    await pauseAt('fence.claimed', fence.token.name);
    await fence.checkClaimed([]);
    return fence;
  }

  /** Looks at the directory again: one readdir of a directory of a few entries. */
  async refresh(): Promise<void> {
    for (const { token } of await fenceEntries(this.dir)) {
      if (supersedes(token, this.token) && (!this.newer || supersedes(token, this.newer))) this.newer = token;
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
    if (this.newer) throw supersededFailure(this.what, this.token.name, this.newer, this.token);
  }

  get claimFile(): string {
    return path.join(this.dir, `${this.token.name}.claim`);
  }

  /** This attempt's file or directory `<token><suffix>` in the fence directory. */
  own(suffix: string): string {
    return path.join(this.dir, `${this.token.name}${suffix}`);
  }

  /**
   * After creating files of its own: when a newer attempt started meanwhile (it may have looked
   * before they existed), removes them and this attempt's claim again and throws, so a late attempt
   * leaves nothing behind.
   */
  async checkClaimed(files: readonly string[]): Promise<void> {
    await this.refresh();
    if (!this.newer) return;
    await this.withdraw(files);
    this.assertCurrent();
  }

  /** Removes what this attempt created: its files, its claim and its sequence marker. */
  async withdraw(files: readonly string[] = []): Promise<void> {
    for (const file of [...files, this.claimFile, path.join(this.dir, `${this.token.seq}.seq`)]) await removeTree(file);
  }

  /**
   * Removes the files of the attempts this one supersedes (if still running, they write to files no
   * path names), and the sequence markers below its own.
   */
  async removeOlder(): Promise<void> {
    for (const entry of await listDir(this.dir)) {
      const token = parseToken(entry);
      const seq = SEQ_MARKER.exec(entry);
      const older = token ? supersedes(this.token, token) : seq !== null && Number(seq[1]) < this.token.seq;
      if (older) await removeTree(path.join(this.dir, entry));
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
      throw await this.explain(err);
    }
    await this.check();
    await renameSynced(moves);
  }
}

/**
 * Removes an attempt's file or directory. A superseded attempt may still be creating files in its
 * directory (a finish's view) while it is removed, which fails the removal with ENOTEMPTY; it is
 * tried again, as node's rm does for such races.
 */
function removeTree(file: string): Promise<void> {
  return rm(file, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}

/** The next sequence number of the directory, taken by creating `<seq>.seq` exclusively. */
async function takeSequence(dir: string, identity: AttemptIdentity): Promise<AttemptToken> {
  let seq = 0;
  for (const entry of await listDir(dir)) {
    const n = Number(SEQ_MARKER.exec(entry)?.[1] ?? parseToken(entry)?.seq ?? 0);
    if (n > seq) seq = n;
  }
  for (;;) {
    seq++;
    try {
      await (await open(path.join(dir, `${seq}.seq`), 'wx')).close();
      return attemptToken(seq, identity);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * Superseded within its own workflow run, an attempt's retry would be superseded too, so the failure
 * is final. Superseded by an attempt of another run (a reset or resumed run, or a task of the old
 * run delivered late), it may retry: a retry takes a newer sequence number, and the run that is no
 * longer current gets no retries from Temporal.
 */
function supersededFailure(what: string, name: string, newer: AttemptToken, own?: AttemptToken): ApplicationFailure {
  return ApplicationFailure.create({
    type: SUPERSEDED,
    nonRetryable: own === undefined || own.run === newer.run,
    message: `${what}: attempt ${name} was superseded by attempt ${newer.name}, which owns the step's files now; this attempt stops without writing`,
  });
}

/**
 * The fence of a stage's merge and finish steps, which the workflow runs one after another: partial
 * merged files and finish outputs are written there under the attempt's token until published.
 */
function stageFenceDir(outPrefix: string): string {
  return `${outPrefix}_shards/merge`;
}

export function claimStageFence(outPrefix: string, identity?: AttemptIdentity): Promise<Fence> {
  return Fence.claim(stageFenceDir(outPrefix), `merge of ${outPrefix}`, identity);
}
