import path from 'node:path';
import { syncDir, syncFile } from '../../gym/durable';
import { JsonlWriter, readLines } from '../../gym/jsonl';
import { shardPath } from './chunkIndex';
import { fenceEntries, Fence, newestToken, supersedes, type AttemptToken } from './fence';
import { parseShardLine } from './shardLines';
import { pauseAt } from '../run/testHooks';

// The files of one chunk's attempts (docs/fencing.md): `<shards>/<chunk>.attempts/` holds, per
// attempt, `<token>.jsonl` (its rollout shard), `<token>_failures.jsonl` and `<token>_superseded.jsonl`
// (the attempts it took over). An attempt starts by taking over the older attempts' files: it copies
// their whole lines into its own, records what it took and dropped, and removes their files. The
// newest attempt's files are the chunk's shard; once the chunk's activity completed, that attempt is
// the one whose result the workflow recorded, since Temporal schedules no attempt after a completion.

export interface AttemptFiles {
  rollouts: string;
  failures: string;
  superseded: string;
}

export function chunkAttemptsDir(outPrefix: string, chunkIndex: number): string {
  return `${shardPath(outPrefix, chunkIndex, 'rollouts').slice(0, -'.jsonl'.length)}.attempts`;
}

export function attemptFiles(dir: string, token: Pick<AttemptToken, 'name'>): AttemptFiles {
  const at = (suffix: string) => path.join(dir, `${token.name}${suffix}`);
  return { rollouts: at('.jsonl'), failures: at('_failures.jsonl'), superseded: at('_superseded.jsonl') };
}

/** Shards written before attempts had files of their own: an older attempt that is only read. */
function legacyFiles(outPrefix: string, chunkIndex: number): AttemptFiles {
  const rollouts = shardPath(outPrefix, chunkIndex, 'rollouts');
  return {
    rollouts,
    failures: shardPath(outPrefix, chunkIndex, 'failures'),
    superseded: `${rollouts.slice(0, -'.jsonl'.length)}_superseded.jsonl`,
  };
}

/** The shard a merge reads for a finished chunk: the newest attempt's files, or a shard written before there were attempts. */
export async function chunkShard(outPrefix: string, chunkIndex: number): Promise<AttemptFiles> {
  const dir = chunkAttemptsDir(outPrefix, chunkIndex);
  const entries = await fenceEntries(dir);
  const newest = newestToken(entries.filter(({ entry, token }) => entry === `${token.name}.jsonl`));
  return newest ? attemptFiles(dir, newest) : legacyFiles(outPrefix, chunkIndex);
}

interface WholeLines {
  lines: string[];
  /** Bytes after the last newline: a line the attempt was writing when it stopped. */
  tornBytes: number;
}

async function wholeLines(file: string): Promise<WholeLines> {
  const out: WholeLines = { lines: [], tornBytes: 0 };
  try {
    for await (const line of readLines(file)) {
      if (!line.terminated) out.tornBytes = line.byteLength;
      else if (line.text !== '') out.lines.push(line.text);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return out;
}

const shardKey = (text: string): string => {
  const entry = parseShardLine({ text });
  return `${entry.task}:${entry.rollout}`;
};

/** What a chunk attempt starts from: the rollout keys and failure lines it holds after the takeover. */
export interface Held {
  keys: Set<string>;
  failureLines: string[];
}

/**
 * One chunk attempt's files, opened once: every later write goes through these handles, so an
 * attempt superseded meanwhile writes into files its successor removed and never re-creates them.
 */
export class ChunkAttempt {
  private constructor(
    readonly fence: Fence,
    readonly files: AttemptFiles,
    readonly rollouts: JsonlWriter,
    readonly failures: JsonlWriter,
    readonly held: Held,
  ) {}

  /**
   * Claims the chunk, creates this attempt's files, takes over the older attempts' lines and looks at
   * the fence after every create, so an attempt overtaken on the way removes what it created.
   */
  static async open(outPrefix: string, chunkIndex: number): Promise<ChunkAttempt> {
    const dir = chunkAttemptsDir(outPrefix, chunkIndex);
    const fence = await Fence.claim(dir, `chunk ${chunkIndex} of ${outPrefix}`);
    const files = attemptFiles(dir, fence.token);
    let writers: JsonlWriter[] = [];
    try {
      const rollouts = await JsonlWriter.open(files.rollouts);
      writers = [rollouts];
      const failures = await JsonlWriter.open(files.failures);
      writers.push(failures);
      await pauseAt('chunk.opened', fence.token.name);
      await fence.checkClaimed(Object.values(files));
      const held = await takeOverOlderAttempts(fence, { rollouts, failures }, files, outPrefix, chunkIndex);
      await fence.checkClaimed(Object.values(files));
      await fence.removeOlder();
      return new ChunkAttempt(fence, files, rollouts, failures, held);
    } catch (err) {
      for (const writer of writers) await writer.close().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.rollouts.close();
    await this.failures.close();
  }

  /**
   * The end of a chunk: one more look (a superseded attempt's result would be refused by Temporal
   * anyway; failing says why in its log), then the shard on stable storage before it is reported
   * done: its files, the attempts directory and the shards directory that may have been created.
   */
  async complete(): Promise<void> {
    await this.fence.check();
    try {
      await syncFile(this.files.rollouts);
      await syncFile(this.files.failures);
      // The sidecar exists only when this attempt took over an older one.
      await syncFile(this.files.superseded).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    } catch (err) {
      throw await this.fence.explain(err);
    }
    await syncDir(this.fence.dir);
    await syncDir(path.dirname(this.fence.dir));
  }
}

/**
 * Takes over the files of the chunk's older attempts (and of a shard written before there were
 * attempts, which is read and left as it is): lines not held yet are appended to this attempt's own
 * files, one sidecar line per attempt says what was kept and dropped. The older attempt may still be
 * writing: what it writes after the copy is lost with its file, and the keys it held in flight run
 * again here. Copying is by key (rollouts) and by line (failures), oldest attempt first.
 */
async function takeOverOlderAttempts(
  fence: Fence,
  own: { rollouts: JsonlWriter; failures: JsonlWriter },
  files: AttemptFiles,
  outPrefix: string,
  chunkIndex: number,
): Promise<Held> {
  const held: Held = { keys: new Set(), failureLines: [] };
  const heldFailures = new Set<string>();
  const heldSuperseded = new Set<string>();
  const sidecar: string[] = [];
  const older = (await fenceEntries(fence.dir))
    .filter(({ token }) => supersedes(fence.token, token))
    .sort((a, b) => a.token.seq - b.token.seq);
  const names = [...new Set(older.map(({ token }) => token.name))];
  const sources: Array<{ name: string; files: AttemptFiles; legacy: boolean }> = [
    { name: 'legacy', files: legacyFiles(outPrefix, chunkIndex), legacy: true },
    ...names.map((name) => ({ name, files: attemptFiles(fence.dir, { name }), legacy: false })),
  ];
  for (const source of sources) {
    const rollouts = await wholeLines(source.files.rollouts);
    const failures = await wholeLines(source.files.failures);
    const history = await wholeLines(source.files.superseded);
    const keptRollouts = rollouts.lines.filter((text) => {
      const k = shardKey(text);
      if (held.keys.has(k)) return false;
      held.keys.add(k);
      return true;
    });
    const keptFailures = failures.lines.filter((text) => !heldFailures.has(text) && heldFailures.add(text));
    held.failureLines.push(...keptFailures);
    for (const text of keptRollouts) await own.rollouts.writeLine(`${text}\n`);
    for (const text of keptFailures) await own.failures.writeLine(`${text}\n`);
    const record =
      !source.legacy || keptRollouts.length + keptFailures.length > 0
        ? JSON.stringify({
            chunk: chunkIndex,
            attempt: source.name,
            superseded_by: fence.token.name,
            rollout_lines_kept: keptRollouts.length,
            rollout_lines_already_held: rollouts.lines.length - keptRollouts.length,
            failure_lines_kept: keptFailures.length,
            failure_lines_already_held: failures.lines.length - keptFailures.length,
            torn_bytes_dropped: rollouts.tornBytes + failures.tornBytes,
          })
        : undefined;
    for (const text of [...history.lines, ...(record ? [record] : [])])
      if (!heldSuperseded.has(text) && heldSuperseded.add(text)) sidecar.push(text);
  }
  if (sidecar.length > 0) {
    const writer = await JsonlWriter.open(files.superseded);
    try {
      for (const text of sidecar) await writer.writeLine(`${text}\n`);
    } finally {
      await writer.close();
    }
  }
  return held;
}
