import { randomBytes } from 'node:crypto';
import { readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  NO_PUBLISHED_DIGESTS,
  PUBLISHED_DIGESTS_FILE,
  damageLine,
  damagedFiles,
  materializedMetaOf,
  publishedDigestsSchema,
  withPublished,
  type DamagedFile,
  type Found,
  type PublishedDigests,
  type PublishedFile,
} from '../../gym/publishedDigests';
import { canonicalJson } from '../../gym/runManifest';
import { renameDurably, syncDir } from '../../gym/durable';
import { onFile } from '../../gym/fileError';
import { fileDigest, readRunManifest } from './runManifest';

// The published-files sidecar of a run directory (gym/publishedDigests.ts has the rules): each step
// records what it published before it returns; a resume inspects the directory before it reuses any
// of it, and `pivot-miner check` shows what the resume would find.

export const PUBLISHED_FILE_DAMAGED = 'PublishedFileDamaged';

function damagedSidecar(file: string, reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${file} is damaged (${reason}), so the run's files cannot be checked; start a new run id`,
    PUBLISHED_FILE_DAMAGED,
  );
}

async function readPublishedDigests(runDir: string): Promise<PublishedDigests> {
  const file = path.join(runDir, PUBLISHED_DIGESTS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return NO_PUBLISHED_DIGESTS;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw damagedSidecar(file, (err as Error).message);
  }
  const parsed = publishedDigestsSchema.safeParse(value);
  if (!parsed.success) throw damagedSidecar(file, parsed.error.issues[0]?.message ?? 'invalid');
  return parsed.data;
}

/**
 * Records the files a step published (absolute paths inside `runDir`) and syncs the sidecar before
 * the step returns. A retry records the same entries again; the file is rewritten only when they
 * change. The temporary name is the writer's own: a superseded attempt may still be recording.
 */
export async function recordPublished(runDir: string, step: string, files: readonly string[]): Promise<void> {
  const entries: Record<string, PublishedFile> = {};
  for (const file of files) {
    const relative = path.relative(runDir, file);
    if (relative.startsWith('..') || path.isAbsolute(relative))
      throw new Error(`${file}: ${step} published it outside its run directory ${runDir}`);
    const { sha256, bytes } = await fileDigest(file, file);
    entries[relative] = { step, sha256, bytes };
  }
  const recorded = await readPublishedDigests(runDir);
  const next = withPublished(recorded, entries);
  if (canonicalJson(next) === canonicalJson(recorded)) return;
  const target = path.join(runDir, PUBLISHED_DIGESTS_FILE);
  const tmp = `${target}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await onFile(tmp, () => writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`));
    await renameDurably([[tmp, target]]);
  } catch (err) {
    // A full disk must not leave a file of this attempt's own name behind for every retry.
    await rm(tmp, { force: true });
    throw err;
  }
}

async function foundDigest(file: string): Promise<Found | undefined> {
  try {
    if (!(await stat(file)).isFile()) return undefined;
    const { sha256, bytes } = await fileDigest(file, file);
    return { sha256, bytes };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function manifestReadable(runDir: string): Promise<boolean> {
  try {
    return (await readRunManifest(runDir)) !== undefined;
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof ApplicationFailure) return false;
    throw err;
  }
}

/** Every recorded file of `runDir` that is missing, truncated or changed. Reads only. */
export async function inspectPublished(runDir: string): Promise<DamagedFile[]> {
  const recorded = await readPublishedDigests(runDir);
  const found = new Map<string, Found | undefined>();
  for (const file of Object.keys(recorded.files)) found.set(file, await foundDigest(path.join(runDir, file)));
  return damagedFiles(recorded, found, await manifestReadable(runDir));
}

/** Refuses the resume, naming each damaged file nothing can rebuild; the run directory is left as it is. */
export function refuseUnrebuildable(runDir: string, damaged: readonly DamagedFile[], what: string): void {
  const fatal = damaged.filter((d) => d.remedy === 'refuse');
  if (fatal.length === 0) return;
  throw ApplicationFailure.nonRetryable(
    `${what} cannot be resumed:\n${fatal.map((d) => `  ${damageLine(runDir, d)}`).join('\n')}`,
    PUBLISHED_FILE_DAMAGED,
  );
}

async function removeIfThere(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** A warning in the activity's log, or on stderr when a stage runs outside an activity (tests, scripts). */
function warn(message: string): void {
  try {
    log.warn(message);
  } catch {
    console.warn(message);
  }
}

/**
 * Logs a line for each damaged file and removes each one a resume writes again, with the meta file
 * of damaged materialized inputs so the stage materializes them again. A changed manifest that
 * passed the identity check is kept; the step that writes it next records it.
 */
export async function dropDamaged(runDir: string, damaged: readonly DamagedFile[]): Promise<void> {
  const dirs = new Set<string>();
  for (const d of damaged) {
    if (d.remedy === 'refuse') continue;
    const meta = materializedMetaOf(d.file);
    const removed = d.remedy === 'identity' ? [] : meta === undefined ? [d.file] : [d.file, meta];
    for (const file of removed) {
      const full = path.join(runDir, file);
      if (await removeIfThere(full)) dirs.add(path.dirname(full));
    }
    warn(damageLine(runDir, d));
  }
  for (const dir of dirs) await syncDir(dir);
}
