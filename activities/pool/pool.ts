import { existsSync } from 'node:fs';
import { open, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DatasetMetricsAccumulator, datasetMetricsHeader, formatDatasetMetricsFile } from '../../gym/datasetMetrics';
import { readJsonl } from '../../gym/jsonl';
import { mkdirDurably, renameDurably, syncDir, syncDirContents } from '../../gym/durable';
import { onFile } from '../../gym/fileError';
import { PIVOTS_FILE, PIVOTS_METRICS_FILE } from '../../gym/publish';
import { validatePivotDataset } from '../../gym/validator';
import { InvalidDatasetError } from '../../contracts/errors';
import { PivotUnion } from '../../gym/curriculum';
import { pauseAt } from '../run/testHooks';

// The pivot pool on disk: `<pool>/versions/<id>/` holds immutable dataset versions, `<pool>/latest`
// is a symlink swapped by rename (atomic), so readers always see one complete version.

export const LATEST_LINK = 'latest';
export const VERSIONS_DIR = 'versions';

/** Rows of a pool file, one at a time: a pool may hold more pivots than fit in memory as objects. */
export async function* poolRows(file: string): AsyncGenerator<{ row: Record<string, unknown>; text: string }> {
  for await (const record of readJsonl(file))
    yield { row: record.value as Record<string, unknown>, text: record.text! };
}

/** The pivots of a pool file as a union to add to (empty for a pool that has no version yet). */
export async function readPoolUnion(file: string | null): Promise<PivotUnion> {
  const union = new PivotUnion();
  if (file !== null) for await (const { row } of poolRows(file)) union.admit(row);
  return union;
}

export async function readRows(file: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const { row } of poolRows(file)) rows.push(row);
  return rows;
}

/** Writes rows (objects, or JSON lines kept byte for byte) to `file` through a temp file and a rename. */
export async function writeRows(
  file: string,
  rows: Iterable<Record<string, unknown> | string> | AsyncIterable<Record<string, unknown> | string>,
): Promise<number> {
  const out = await open(`${file}.tmp`, 'w');
  let count = 0;
  try {
    for await (const row of rows) {
      const line = typeof row === 'string' ? `${row}\n` : `${JSON.stringify(row)}\n`;
      await onFile(`${file}.tmp`, () => out.write(line));
      count += 1;
    }
  } finally {
    await out.close();
  }
  await renameDurably([[`${file}.tmp`, file]]);
  return count;
}

/**
 * The union of a pool version and newly published pivots, streamed into `out`: the previous lines as
 * they were (NeMo Gym's bytes, e.g. `1.0`, survive), then each new pivot the pool does not hold yet.
 */
export async function writePoolUnion(
  out: string,
  previousPath: string | null,
  newPath: string,
): Promise<{ previous: number; added: number }> {
  const union = new PivotUnion();
  let previous = 0;
  let added = 0;
  async function* lines(): AsyncGenerator<string> {
    if (previousPath !== null) {
      for await (const { row, text } of poolRows(previousPath)) {
        union.admit(row);
        previous += 1;
        yield text;
      }
    }
    for await (const { row, text } of poolRows(newPath)) {
      if (!union.admit(row)) continue;
      added += 1;
      yield text;
    }
  }
  await writeRows(out, lines());
  return { previous, added };
}

/** The version `latest` points at, or null for a pool that has never published. */
export async function latestVersion(poolDir: string): Promise<{ id: string; dir: string; pivotsPath: string } | null> {
  try {
    const target = await readlink(path.join(poolDir, LATEST_LINK));
    const dir = path.resolve(poolDir, target);
    return { id: path.basename(dir), dir, pivotsPath: path.join(dir, PIVOTS_FILE) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Points `latest` at a version directory by renaming a fresh symlink over it. */
export async function pointLatestAt(poolDir: string, versionDir: string): Promise<void> {
  const tmp = path.join(poolDir, `${LATEST_LINK}.tmp`);
  await rm(tmp, { force: true });
  await symlink(path.relative(poolDir, versionDir), tmp);
  await rename(tmp, path.join(poolDir, LATEST_LINK));
  await syncDir(poolDir);
}

/** A version id not taken yet under `<pool>/versions` (a second run in the same second gets a suffix). */
export function freeVersionId(poolDir: string, base: string): string {
  let id = base;
  for (let n = 2; existsSync(path.join(poolDir, VERSIONS_DIR, id)); n += 1) id = `${base}-${n}`;
  return id;
}

/** The newest version id taken under `<pool>/versions` from `base` (`base`, then `base-2`...), or null. */
export function lastVersionId(poolDir: string, base: string): string | null {
  let last: string | null = null;
  for (let id = base, n = 2; existsSync(path.join(poolDir, VERSIONS_DIR, id)); id = `${base}-${n++}`) last = id;
  return last;
}

/** The staging directory a version is written in before `commitVersionDir` renames it into place. */
export async function stagingDir(poolDir: string, id: string): Promise<string> {
  const dir = path.join(poolDir, VERSIONS_DIR, `.${id}.staging`);
  await rm(dir, { recursive: true, force: true });
  await mkdirDurably(dir);
  return dir;
}

export async function commitVersionDir(poolDir: string, staging: string, id: string): Promise<string> {
  const dir = path.join(poolDir, VERSIONS_DIR, id);
  // The version is whole on disk before its name appears, and its name before `latest` points at it.
  await syncDirContents(staging);
  await rename(staging, dir);
  await syncDir(path.dirname(dir));
  await pointLatestAt(poolDir, dir);
  await pauseAt('version.committed', id);
  return dir;
}

const versionFileSchema = z.looseObject({ version: z.string(), kind: z.enum(['nightly', 'curriculum_round']) });
export type VersionFile = z.infer<typeof versionFileSchema>;

/**
 * The version a retried publish already committed, or null. A worker can die, or a host lose power,
 * after the rename that commits a version and before its activity reports done; the retry must then
 * finish the steps after the commit (moving `latest`, recording sources or retirements) rather than
 * stage the version again, which would publish it twice or fail on the name it already holds.
 * `isOwn` tells this publish's version from an older one of the same name.
 */
export async function committedVersion(
  root: string,
  id: string,
  isOwn: (version: VersionFile) => boolean,
): Promise<{ dir: string; version: VersionFile } | null> {
  const dir = path.join(root, VERSIONS_DIR, id);
  const file = path.join(dir, 'version.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const version = versionFileSchema.parse(JSON.parse(text));
  if (!isOwn(version)) return null;
  if ((await latestVersion(root))?.dir !== dir) await pointLatestAt(root, dir);
  return { dir, version };
}

/** Rewrites pivots_metrics.json for the rows now in pivots.jsonl (publish wrote it for a different set). */
export async function writeDatasetMetrics(
  dir: string,
  datasetName: string,
  jsonlFpath: string,
  pivotsPath: string,
): Promise<void> {
  const metrics = new DatasetMetricsAccumulator();
  for await (const { row } of poolRows(pivotsPath)) metrics.add(row);
  const header = datasetMetricsHeader({ name: datasetName, type: 'train', jsonl_fpath: jsonlFpath, license: 'TBD' });
  const metricsFile = path.join(dir, PIVOTS_METRICS_FILE);
  await onFile(metricsFile, () => writeFile(metricsFile, formatDatasetMetricsFile(header, metrics.result())));
}

/** NeMo Gym's validator over a version before it is committed; an empty pool is a valid (empty) version. */
export async function validateVersion(
  pivotsPath: string,
  agentName: string,
  gymConfigPath: string,
  rows: number,
  batchActions: boolean,
): Promise<void> {
  if (rows === 0) return;
  const validation = await validatePivotDataset({
    path: pivotsPath,
    agentRef: agentName,
    requireFields: [],
    requireAnyFields: [],
    checkToolNames: true,
    batchActions,
    gymConfigPath,
  });
  if (validation.exitCode !== 0) {
    throw new InvalidDatasetError(`pool version failed validation: ${validation.stderr.trim()}`);
  }
}
