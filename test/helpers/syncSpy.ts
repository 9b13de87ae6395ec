import { fstatSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

// Which files and directories a piece of code fsynced: FileHandle's sync and datasync are wrapped
// while it runs, and each call records the inode it reached. Inodes rather than paths, since a file
// is synced under its temporary name and published by a rename.

type SyncMethod = (this: FileHandle) => Promise<void>;

export class SyncRecord {
  readonly inodes = new Set<string>();

  /** True when the file or directory at `file` now is one that was synced. */
  synced(file: string): boolean {
    const st = statSync(file);
    return this.inodes.has(`${st.dev}:${st.ino}`);
  }

  /** The paths of `files` (and, with `withDirs`, their directories) that were not synced. */
  missing(files: readonly string[], withDirs = true): string[] {
    const all = new Set(files);
    if (withDirs) for (const file of files) all.add(path.dirname(file));
    return [...all].filter((file) => !this.synced(file));
  }
}

export async function recordSyncs<T>(run: () => Promise<T>): Promise<{ result: T; record: SyncRecord }> {
  const probe = await open(__filename, 'r');
  const proto = Object.getPrototypeOf(probe) as Record<'sync' | 'datasync', SyncMethod>;
  await probe.close();
  const record = new SyncRecord();
  const original = { sync: proto.sync, datasync: proto.datasync };
  const wrap = (method: SyncMethod): SyncMethod =>
    async function (this: FileHandle) {
      const st = fstatSync(this.fd);
      record.inodes.add(`${st.dev}:${st.ino}`);
      return method.call(this);
    };
  proto.sync = wrap(original.sync);
  proto.datasync = wrap(original.datasync);
  try {
    return { result: await run(), record };
  } finally {
    proto.sync = original.sync;
    proto.datasync = original.datasync;
  }
}
