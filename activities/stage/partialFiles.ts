import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { onFile } from '../../gym/fileError';
import type { MergeProgress } from '../../contracts/payloads';
import { mergedPaths } from '../chunk/chunkIndex';
import type { Fence } from '../chunk/fence';
import { pauseAt } from '../run/testHooks';

// A merge attempt's partial merged files: named after the attempt's fence token, taken over from the
// attempt before it by renaming, appended to at the positions the last merge reported, and
// published by renaming them onto the merged paths (docs/fencing.md).

/** A merge attempt's partial merged files, in the stage's fence directory. */
export interface PartialFiles {
  rollouts: string;
  failures: string;
  digests: string;
}

function partialFiles(dir: string, name: string): PartialFiles {
  const at = (kind: string) => path.join(dir, `${name}.${kind}.jsonl`);
  return { rollouts: at('rollouts'), failures: at('failures'), digests: at('digests') };
}

export type Handles = Record<keyof PartialFiles, FileHandle>;

/**
 * The partial files this attempt appends to, opened: those of the merge attempt whose progress the
 * workflow passed on, taken by renaming them. That attempt completed, so no process writes them any
 * more; an attempt still running (superseded, or of a run cancelled before this one resumed) writes
 * only files of its own, which nobody renames. Without them, empty files of its own. The files are
 * opened before the look that confirms the claim, so an attempt overtaken on the way never creates
 * them again; the older attempts' files are then removed.
 */
export async function takePartialFiles(
  fence: Fence,
  from: MergeProgress,
): Promise<{ files: PartialFiles; handles: Handles }> {
  const files = partialFiles(fence.dir, fence.token.name);
  if (from.partial) {
    const source = partialFiles(fence.dir, from.partial);
    for (const kind of ['rollouts', 'failures', 'digests'] as const) await renameIfThere(source[kind], files[kind]);
  }
  await pauseAt('merge.renamed', fence.token.name);
  const handles: Partial<Handles> = {};
  try {
    for (const kind of ['rollouts', 'failures', 'digests'] as const)
      handles[kind] = await open(files[kind], constants.O_RDWR | constants.O_CREAT);
    await fence.checkClaimed(Object.values(files));
  } catch (err) {
    for (const handle of Object.values(handles)) await handle.close();
    throw err;
  }
  await fence.removeOlder();
  return { files, handles: handles as Handles };
}

async function renameIfThere(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    // Not on this host's disk or removed: the sizes will not match and the merge rebuilds from chunk 0.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Appends whole lines as read (shard lines are already our JSON, so re-serializing them would only
 * cost time) at an explicit position: a retried merge starts over at the size the last successful
 * one reported, so lines a failed attempt wrote are overwritten instead of repeated.
 */
const NEWLINE = Buffer.from('\n');

export class LineWriter {
  private parts: Buffer[] = [];
  private constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
    public position: number,
  ) {}

  /** Writes through a handle opened before the attempt's last look at its claim, cut to `position`. */
  static async at(file: string, handle: FileHandle, position: number): Promise<LineWriter> {
    await onFile(file, () => handle.truncate(position));
    return new LineWriter(file, handle, position);
  }

  push(text: string): void {
    this.pushBytes(Buffer.from(text, 'utf8'));
  }

  /** A line already in UTF-8, without its `\n`: a shard's rollout, copied on undecoded. */
  pushBytes(line: Buffer): void {
    this.parts.push(line, NEWLINE);
  }

  /** Called once per chunk, so memory holds one chunk's lines at most. */
  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const parts = this.parts;
    this.parts = [];
    // Written as the pieces they are: a chunk's lines copied into one buffer first would cost a
    // chunk's bytes of memory outside the heap, which the collector counts against its next run.
    const bytes = parts.reduce((n, part) => n + part.length, 0);
    const { bytesWritten } = await onFile(this.file, () => this.handle.writev(parts, this.position));
    if (bytesWritten !== bytes) throw new Error(`${this.file}: ${bytesWritten} of ${bytes} bytes written`);
    this.position += bytes;
  }

  /** The lines written so far, on stable storage: the progress a merge reports is what the next one continues from. */
  async sync(): Promise<void> {
    await this.flush();
    await onFile(this.file, () => this.handle.sync());
  }
}

/** Where the merged files are published, from this attempt's partial files. */
export function mergedMoves(outPrefix: string, files: PartialFiles): Array<[string, string]> {
  const { rolloutsPath, failuresPath, digestsPath } = mergedPaths(outPrefix);
  return [
    [files.rollouts, rolloutsPath],
    [files.failures, failuresPath],
    [files.digests, digestsPath],
  ];
}
