import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { ConfigError } from '../../contracts/errors';
import { resolveInside } from '../run/configFile';
import { writeFileDurably } from '../../gym/durable';

// Which source rollouts files a nightly run still has to mine. The pool manifest remembers every
// consumed file by size, mtime and content hash; a file counts as new when its path is unknown and
// as changed when its content hash differs (a touched but identical file is not re-mined).

export const MANIFEST_FILE = 'manifest.json';

const manifestEntrySchema = z.strictObject({
  path: z.string().min(1).describe('Relative to the worker base directory'),
  size: z.number().int().nonnegative(),
  mtime_ms: z.number(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  version: z.string().min(1).describe('Dataset version that consumed this content'),
});
export type ManifestEntry = z.infer<typeof manifestEntrySchema>;

const poolManifestSchema = z.strictObject({ sources: z.array(manifestEntrySchema) });
export type PoolManifest = z.infer<typeof poolManifestSchema>;

export interface SourceFile {
  path: string;
  absPath: string;
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** The directory part of a glob before its first wildcard: the part confinement can check up front. */
function globRoot(glob: string): string {
  const parts = glob.split('/');
  const firstWild = parts.findIndex((p) => /[*?[\]{}]/.test(p));
  return firstWild === -1 ? path.dirname(glob) : parts.slice(0, firstWild).join('/') || '.';
}

/**
 * Files matching any of the globs (tinyglobby: `**` spans directories), each confined to `baseDir`
 * (a glob's root before matching, every match after it, symlinks resolved), sorted, without repeats.
 */
export async function expandSourceGlobs(baseDir: string, globs: readonly string[]): Promise<string[]> {
  for (const g of globs) resolveInside(baseDir, baseDir, globRoot(g));
  const matches = await glob([...globs], { cwd: baseDir, absolute: true, onlyFiles: true, expandDirectories: false });
  for (const file of matches) resolveInside(baseDir, baseDir, file);
  return [...new Set(matches.map((m) => path.resolve(m)))].sort();
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

export async function readManifest(poolDir: string): Promise<PoolManifest> {
  const file = path.join(poolDir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { sources: [] };
    throw err;
  }
  const parsed = poolManifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new ConfigError(`${file}: not a pool manifest: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

export async function writeManifest(poolDir: string, manifest: PoolManifest): Promise<void> {
  const file = path.join(poolDir, MANIFEST_FILE);
  await writeFileDurably(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Sources not yet consumed with their current content; hashing is skipped when size and mtime match. */
export async function findNewSources(
  baseDir: string,
  globs: readonly string[],
  manifest: PoolManifest,
): Promise<{ matched: number; fresh: SourceFile[] }> {
  const known = new Map(manifest.sources.map((e) => [e.path, e]));
  const files = await expandSourceGlobs(baseDir, globs);
  const fresh: SourceFile[] = [];
  for (const absPath of files) {
    const rel = path.relative(baseDir, absPath);
    const st = await stat(absPath);
    const entry = known.get(rel);
    if (entry && entry.size === st.size && entry.mtime_ms === st.mtimeMs) continue;
    const sha256 = await sha256File(absPath);
    if (entry && entry.sha256 === sha256) continue;
    fresh.push({ path: rel, absPath, size: st.size, mtimeMs: st.mtimeMs, sha256 });
  }
  return { matched: files.length, fresh };
}

/** The manifest after `version` consumed `sources`: same-path entries are replaced. */
export function recordSources(manifest: PoolManifest, sources: readonly SourceFile[], version: string): PoolManifest {
  const byPath = new Map(manifest.sources.map((e) => [e.path, e]));
  for (const s of sources)
    byPath.set(s.path, { path: s.path, size: s.size, mtime_ms: s.mtimeMs, sha256: s.sha256, version });
  return { sources: [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path)) };
}
