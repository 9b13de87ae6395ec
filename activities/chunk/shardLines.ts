import { readFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { rolloutDigest } from '../../gym/aggregateMetrics';
import { JsonlError } from '../../gym/errors';
import { decodeLine, jsonText, type JsonlLine } from '../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../gym/kindedJson';

// A rollout shard line is `<digest>\t<rollout>`: the rollout's digest (gym/aggregateMetrics.ts
// rolloutDigest, or `null`) and the rollout line NeMo Gym writes, joined by a tab, which orjson
// never writes outside a string escape. One line holds both, so a crash tears or keeps them together,
// and the merge, resume and profile read a rollout's key and numbers from its digest without
// decoding its trajectory. Shards written before there were digests hold the rollout alone.

const SEPARATOR = '\t';

export interface ShardEntry {
  task: number;
  rollout: number;
  digest: string;
  /** The rollout line as NeMo Gym writes it, without its `\n`. */
  line: string;
}

/** The shard line of a completed rollout, `\n` included. */
export function shardLine(result: JsonDict): string {
  return splicedShardLine(rolloutDigest(result) ?? 'null', jsonText(result));
}

/** The shard line of a rollout whose digest and line are already text (gym/rolloutSplice.ts). */
export function splicedShardLine(digest: string, line: string): string {
  return `${digest}${SEPARATOR}${line}\n`;
}

interface Keyed {
  _ng_task_index: number;
  _ng_rollout_index: number;
}

/** A shard line's parts; the key is read from the digest, or from the rollout when there is none. */
export function parseShardLine({ text }: Pick<JsonlLine, 'text'>): ShardEntry {
  const cut = text.indexOf(SEPARATOR);
  if (cut < 0) {
    const { plain, kinded } = parseKinded(text);
    return entry(plain as Keyed, rolloutDigest(kinded as JsonDict) ?? 'null', text);
  }
  const digest = text.slice(0, cut);
  const line = text.slice(cut + 1);
  return entry(JSON.parse(digest === 'null' ? line : digest) as Keyed, digest, line);
}

function entry(keyed: Keyed, digest: string, line: string): ShardEntry {
  return { task: keyed._ng_task_index, rollout: keyed._ng_rollout_index, digest, line };
}

/** A shard line's parts as the shard's bytes: what a merge copies on without decoding a rollout. */
export interface ShardBytes {
  task: number;
  rollout: number;
  digest: Buffer;
  /** The rollout line as NeMo Gym writes it, without its `\n`. */
  line: Buffer;
}

const NEWLINE = 0x0a;
const TAB = 0x09;
const CR = 0x0d;

/**
 * parseShardLine over a line's bytes, `\n` cut off: the digest is decoded for the key, the rollout
 * is checked to be UTF-8 and kept as bytes. A line without a digest is decoded whole, as before.
 */
function parseShardBytes(bytes: Buffer, file: string, line: number): ShardBytes {
  const cut = bytes.indexOf(TAB);
  if (cut < 0) {
    const entry = parseShardLine({ text: decodeLine(bytes, file, line) });
    return { ...entry, digest: Buffer.from(entry.digest, 'utf8'), line: Buffer.from(entry.line, 'utf8') };
  }
  const end = bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
  const rolloutLine = bytes.subarray(cut + 1, end);
  if (!isUtf8(rolloutLine)) throw new JsonlError(file, line, 'invalid UTF-8');
  const digestText = decodeLine(bytes.subarray(0, cut), file, line);
  const keyed = JSON.parse(digestText === 'null' ? rolloutLine.toString('utf8') : digestText) as Keyed;
  // The digest as its decoded text holds it (a byte-order mark before it dropped); it is small.
  return {
    task: keyed._ng_task_index,
    rollout: keyed._ng_rollout_index,
    digest: Buffer.from(digestText, 'utf8'),
    line: rolloutLine,
  };
}

/**
 * The entries of a rollout shard, read whole: a merge holds a chunk's lines anyway, and as one
 * buffer outside the JS heap they cost the collector nothing. Blank lines are skipped; a torn last
 * line is dropped when it cannot be read (only a chunk attempt that crashed leaves one, and its
 * retry cuts it off); a file that is not there has none.
 */
export async function readShardEntries(file: string): Promise<ShardBytes[]> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const entries: ShardBytes[] = [];
  let line = 1;
  for (let from = 0; from < data.length; line++) {
    const nl = data.indexOf(NEWLINE, from);
    const terminated = nl >= 0;
    const bytes = data.subarray(from, terminated ? nl : data.length);
    from = terminated ? nl + 1 : data.length;
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === CR)) continue;
    try {
      entries.push(parseShardBytes(bytes, file, line));
    } catch (err) {
      if (terminated || err instanceof JsonlError) throw err;
    }
  }
  return entries;
}
