import { access, open, readFile } from 'node:fs/promises';
import { writeFileDurably } from '../../gym/durable';
import { z } from 'zod';

// The offsets index of a materialized inputs file: the byte offset where each chunk starts (plus the
// file size), as little-endian uint64s. A chunk activity reads 16 bytes and seeks, so a retried chunk
// of a million-row run costs the same as the first one.

export function materializedInputsPath(outPrefix: string): string {
  return `${outPrefix}_materialized_inputs.jsonl`;
}
export function offsetsPath(outPrefix: string): string {
  return `${outPrefix}_materialized_inputs.offsets.bin`;
}
export function metaPath(outPrefix: string): string {
  return `${outPrefix}_materialized_inputs.meta.json`;
}
export function shardPath(outPrefix: string, chunkIndex: number, kind: 'rollouts' | 'failures'): string {
  const name = String(chunkIndex).padStart(6, '0');
  return `${outPrefix}_shards/${name}${kind === 'failures' ? '_failures' : ''}.jsonl`;
}

/** The merged files; the digests (see shardLines.ts) sit with the shards, out of the artifacts NeMo Gym also writes. */
export function mergedPaths(outPrefix: string): { rolloutsPath: string; failuresPath: string; digestsPath: string } {
  return {
    rolloutsPath: `${outPrefix}.jsonl`,
    failuresPath: `${outPrefix}_failures.jsonl`,
    digestsPath: `${outPrefix}_shards/digests.jsonl`,
  };
}

/** The merged digests of a stage, or undefined for a stage merged before there were any. */
export async function mergedDigestsPath(outPrefix: string): Promise<string | undefined> {
  const { digestsPath } = mergedPaths(outPrefix);
  return access(digestsPath).then(
    () => digestsPath,
    () => undefined,
  );
}

export const materializedMetaSchema = z.object({
  rows: z.number().int(),
  tasks: z.number().int(),
  chunks: z.number().int(),
  chunkSize: z.number().int(),
  /** The names the row index's records point into; absent for materializations made before there was one. */
  agentNames: z.array(z.string()).optional(),
  /** Per agent name, the environment server its rows' data stamps on them (null: none); absent before stamps were indexed. */
  environmentServers: z.array(z.string().nullable()).optional(),
});
export type MaterializedMeta = z.infer<typeof materializedMetaSchema>;

/** Writes the index, then the meta file last: the meta file's presence marks a finished materialization. */
export async function writeChunkIndex(outPrefix: string, chunkStarts: number[], meta: MaterializedMeta): Promise<void> {
  const buf = Buffer.alloc(chunkStarts.length * 8);
  chunkStarts.forEach((offset, i) => buf.writeBigUInt64LE(BigInt(offset), i * 8));
  await writeFileDurably(offsetsPath(outPrefix), buf);
  await writeFileDurably(metaPath(outPrefix), JSON.stringify(meta));
}

export async function readMaterializedMeta(outPrefix: string): Promise<MaterializedMeta | undefined> {
  try {
    return materializedMetaSchema.parse(JSON.parse(await readFile(metaPath(outPrefix), 'utf8')));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Byte range [start, end) and first line number of one chunk. */
export async function chunkRange(
  outPrefix: string,
  chunkIndex: number,
  chunkSize: number,
): Promise<{ start: number; end: number; firstLine: number }> {
  const fh = await open(offsetsPath(outPrefix), 'r');
  try {
    const buf = Buffer.alloc(16);
    const { bytesRead } = await fh.read(buf, 0, 16, chunkIndex * 8);
    if (bytesRead < 16) throw new Error(`chunk ${chunkIndex} is not in the offsets index of ${outPrefix}`);
    return {
      start: Number(buf.readBigUInt64LE(0)),
      end: Number(buf.readBigUInt64LE(8)),
      firstLine: chunkIndex * chunkSize + 1,
    };
  } finally {
    await fh.close();
  }
}
