import { mkdir, open, readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { onFile } from './fileError';

// Durable before done (docs/fencing.md, "Durable before done"): a step reports a file complete only
// once it is on stable storage. A killed process leaves the page cache to the kernel, but a power cut,
// a kernel panic or a VM reset drops what was not synced, and Temporal, on another host, would still
// say the step is done. The cost is paid once per step (a few fsyncs), never per line.

/** Flushes a file's data and metadata to stable storage. */
export async function syncFile(file: string): Promise<void> {
  await onFile(file, async () => {
    const handle = await open(file, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/** Makes a directory's entries durable: needed after a create, rename or unlink in it. */
export async function syncDir(dir: string): Promise<void> {
  await syncFile(dir);
}

/**
 * Creates a directory and its missing parents, and makes each new entry durable: a directory made
 * but not synced into its parent vanishes at a power cut with everything under it, synced or not.
 */
export async function mkdirDurably(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  const created: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    created.push(d);
    if (d === path.resolve(first) || d === path.dirname(d)) break;
  }
  for (const d of created.reverse()) await syncDir(path.dirname(d));
}

/** Syncs files, then each directory that holds one of them, once. */
export async function syncFiles(files: Iterable<string>): Promise<void> {
  const dirs = new Set<string>();
  for (const file of files) {
    await syncFile(file);
    dirs.add(path.dirname(file));
  }
  for (const dir of dirs) await syncDir(dir);
}

/** Syncs every file directly in a directory (a staged version about to be renamed into place), then the directory. */
export async function syncDirContents(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true }))
    if (entry.isFile()) await syncFile(path.join(dir, entry.name));
  await syncDir(dir);
}

type Moves = ReadonlyArray<readonly [from: string, to: string]>;

/** Syncs files, then renames them and makes the renames durable. */
export async function renameDurably(moves: Moves): Promise<void> {
  for (const [from] of moves) await syncFile(from);
  await renameSynced(moves);
}

/** Renames files already synced and makes the renames durable (every source and target directory, once). */
export async function renameSynced(moves: Moves): Promise<void> {
  const dirs = new Set<string>();
  for (const [from, to] of moves) {
    await rename(from, to);
    dirs.add(path.dirname(from)).add(path.dirname(to));
  }
  for (const dir of dirs) await syncDir(dir);
}

/** Writes a file whole under a temporary name, syncs it and renames it into place durably. */
export async function writeFileDurably(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.tmp`;
  await onFile(tmp, () => writeFile(tmp, data));
  await renameDurably([[tmp, file]]);
}
