import { existsSync } from 'node:fs';
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { DatasetMetricsAccumulator, datasetMetricsHeader, formatDatasetMetricsFile } from '../gym/datasetMetrics';
import { readJsonl } from '../gym/jsonl';
import { PIVOTS_FILE, PIVOTS_METRICS_FILE } from '../gym/publish';
import { validatePivotDataset } from '../gym/validator';
import type { PipelineConfig } from './config';
import { resolveInside } from './config';

/** Pivot identity has one home (gym/pivotIdentity.ts); pool callers keep importing it from here. */
export { pivotKey } from '../gym/pivotIdentity';

// The pivot pool on disk: `<pool>/versions/<id>/` holds immutable dataset versions, `<pool>/latest`
// is a symlink swapped by rename (atomic), so readers always see one complete version.

export const LATEST_LINK = 'latest';
export const VERSIONS_DIR = 'versions';

export function poolDirFor(config: PipelineConfig, artifactsRoot: string): string {
  return resolveInside(artifactsRoot, artifactsRoot, config.pool.dir ?? path.join('pools', config.name));
}

export async function readRows(file: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const { value } of readJsonl(file)) rows.push(value as Record<string, unknown>);
  return rows;
}

export async function writeRows(file: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  await writeFile(`${file}.tmp`, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  await rename(`${file}.tmp`, file);
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
}

/** A version id not taken yet under `<pool>/versions` (a second run in the same second gets a suffix). */
export function freeVersionId(poolDir: string, base: string): string {
  let id = base;
  for (let n = 2; existsSync(path.join(poolDir, VERSIONS_DIR, id)); n += 1) id = `${base}-${n}`;
  return id;
}

/** The staging directory a version is written in before `commitVersionDir` renames it into place. */
export async function stagingDir(poolDir: string, id: string): Promise<string> {
  const dir = path.join(poolDir, VERSIONS_DIR, `.${id}.staging`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  return dir;
}

export async function commitVersionDir(poolDir: string, staging: string, id: string): Promise<string> {
  const dir = path.join(poolDir, VERSIONS_DIR, id);
  await rename(staging, dir);
  await pointLatestAt(poolDir, dir);
  return dir;
}

/** Rewrites pivots_metrics.json for the rows now in pivots.jsonl (publish wrote it for a different set). */
export async function writeDatasetMetrics(dir: string, datasetName: string, jsonlFpath: string, rows: readonly Record<string, unknown>[]) {
  const metrics = new DatasetMetricsAccumulator();
  for (const row of rows) metrics.add(row);
  const header = datasetMetricsHeader({ name: datasetName, type: 'train', jsonl_fpath: jsonlFpath, license: 'TBD' });
  await writeFile(path.join(dir, PIVOTS_METRICS_FILE), formatDatasetMetricsFile(header, metrics.result()));
}

/** NeMo Gym's validator over a version before it is committed; an empty pool is a valid (empty) version. */
export async function validateVersion(pivotsPath: string, agentName: string, gymConfigPath: string, rows: number): Promise<void> {
  if (rows === 0) return;
  const validation = await validatePivotDataset({
    path: pivotsPath,
    agentRef: agentName,
    requireFields: [],
    requireAnyFields: [],
    checkToolNames: true,
    gymConfigPath,
  });
  if (validation.exitCode !== 0) {
    throw ApplicationFailure.nonRetryable(`pool version failed validation: ${validation.stderr.trim()}`, 'InvalidDataset');
  }
}
