import { rolloutDigest } from '../../gym/aggregateMetrics';
import { jsonText, type JsonlLine } from '../../gym/jsonl';
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
