import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { readLines } from '../gym/jsonl';
import { shardPath } from './chunkIndex';
import { attemptToken, compareTokens, Fence, type AttemptToken } from './fence';
import { parseShardLine } from './shardLines';

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
  let newest: AttemptToken | undefined;
  for (const { token } of await new Fence(dir, attemptToken(0, 0), `chunk ${chunkIndex}`).entries())
    if (!newest || compareTokens(token, newest) > 0) newest = token;
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

/**
 * Takes over the files of the chunk's older attempts (and of a shard written before there were
 * attempts, which is read and left as it is): lines not held yet are appended to this attempt's own
 * files, one sidecar line per attempt says what was kept and dropped, and the older files are removed.
 * The older attempt may still be writing: what it writes after the copy is lost with its file, and
 * the keys it held in flight run again here. Copying is by key (rollouts) and by line (failures), so a
 * retried takeover copies nothing twice.
 */
export async function takeOverOlderAttempts(
  fence: Fence,
  own: AttemptFiles,
  outPrefix: string,
  chunkIndex: number,
): Promise<void> {
  const heldKeys = new Set((await wholeLines(own.rollouts)).lines.map(shardKey));
  const heldFailures = new Set((await wholeLines(own.failures)).lines);
  const heldSuperseded = new Set((await wholeLines(own.superseded)).lines);
  const older = (await fence.entries())
    .filter(({ token }) => compareTokens(token, fence.token) < 0)
    .sort((a, b) => compareTokens(a.token, b.token));
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
      if (heldKeys.has(k)) return false;
      heldKeys.add(k);
      return true;
    });
    const keptFailures = failures.lines.filter((text) => !heldFailures.has(text) && heldFailures.add(text));
    const keptHistory = history.lines.filter((text) => !heldSuperseded.has(text) && heldSuperseded.add(text));
    if (keptRollouts.length > 0) await appendFile(own.rollouts, keptRollouts.map((t) => `${t}\n`).join(''));
    if (keptFailures.length > 0) await appendFile(own.failures, keptFailures.map((t) => `${t}\n`).join(''));
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
    const sidecar = [...keptHistory, ...(record && !heldSuperseded.has(record) ? [record] : [])];
    if (sidecar.length > 0) await appendFile(own.superseded, sidecar.map((t) => `${t}\n`).join(''));
  }
  await fence.removeOlder();
}
