import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure } from '@temporalio/common';
import {
  PIPELINE_VERSION,
  RUN_MANIFEST_FILE,
  canonicalJson,
  runIdentityMessage,
  runManifestDifferences,
  runManifestSchema,
  type FileDigest,
  type RunManifest,
} from '../../gym/runManifest';
import type { PipelineConfig } from '../../contracts/config';
import { writeFileDurably } from '../../gym/durable';

// The run manifest's files (gym/runManifest.ts has the rules). A refusal is an
// ApplicationFailure.nonRetryable: a retry would compare the same files again.

export const RUN_IDENTITY_ERROR_TYPE = 'RunIdentityMismatch';

export async function fileDigest(file: string, shownPath: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { path: shownPath, sha256: hash.digest('hex'), bytes: (await stat(file)).size };
}

/** The manifest of a run about to start or resume (no materialized inputs yet). */
export function currentRunManifest(
  config: PipelineConfig | Record<string, unknown>,
  inputs: Record<string, FileDigest>,
): RunManifest {
  // Through JSON, so the manifest holds what its file will hold (no undefined-valued keys).
  const plain = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
  return {
    manifest_version: 1,
    pipeline_version: PIPELINE_VERSION,
    config_sha256: createHash('sha256').update(canonicalJson(plain)).digest('hex'),
    config: plain,
    inputs,
    materialized: {},
  };
}

export async function readRunManifest(dir: string): Promise<RunManifest | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, RUN_MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = runManifestSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(
      `${path.join(dir, RUN_MANIFEST_FILE)} is not a run manifest this version reads (${parsed.error.issues[0]?.message ?? 'invalid'}); use a new run id`,
      RUN_IDENTITY_ERROR_TYPE,
    );
  }
  return parsed.data;
}

async function writeRunManifest(dir: string, manifest: RunManifest): Promise<void> {
  const file = path.join(dir, RUN_MANIFEST_FILE);
  await writeFileDurably(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * Refuses to go on when `dir` holds the manifest of a run with another identity. Reads only: the
 * caller writes nothing in `dir` before this returns. A directory without a manifest (new, or made
 * before manifests were written) passes; `recordRunManifest` then adopts it.
 */
export async function checkRunManifest(
  dir: string,
  current: RunManifest,
  what: string,
): Promise<RunManifest | undefined> {
  const recorded = await readRunManifest(dir);
  if (recorded === undefined) return undefined;
  const differences = runManifestDifferences(recorded, current);
  if (differences.length > 0) {
    throw ApplicationFailure.nonRetryable(
      runIdentityMessage(what, differences, path.join(dir, RUN_MANIFEST_FILE)),
      RUN_IDENTITY_ERROR_TYPE,
    );
  }
  return recorded;
}

/** Writes the manifest after a passed check, keeping the materialized inputs already recorded. */
export async function recordRunManifest(
  dir: string,
  current: RunManifest,
  recorded: RunManifest | undefined,
): Promise<void> {
  const manifest = { ...current, materialized: { ...recorded?.materialized, ...current.materialized } };
  if (recorded !== undefined && canonicalJson(recorded) === canonicalJson(manifest)) return;
  await writeRunManifest(dir, manifest);
}

/**
 * Records a stage's materialized inputs in the run's manifest, or, when they are recorded already
 * (a resumed run), checks that the file is still the one the run's rollouts were made from. Runs
 * without a manifest (stages started on their own, as tests do) record nothing.
 */
export async function checkMaterializedInputs(runDir: string, stage: string, file: string): Promise<void> {
  const recorded = await readRunManifest(runDir);
  if (recorded === undefined) return;
  const digest = await fileDigest(file, path.relative(runDir, file));
  const differences = runManifestDifferences(recorded, { ...recorded, materialized: { [stage]: digest } });
  if (differences.length > 0) {
    throw ApplicationFailure.nonRetryable(
      runIdentityMessage(`the run in ${runDir}`, differences, path.join(runDir, RUN_MANIFEST_FILE)),
      RUN_IDENTITY_ERROR_TYPE,
    );
  }
  if (recorded.materialized[stage] === undefined) {
    await writeRunManifest(runDir, { ...recorded, materialized: { ...recorded.materialized, [stage]: digest } });
  }
}

/** The digest of a file about to be written from `text`, so it can be checked before the write. */
export function textDigest(text: string, shownPath: string): FileDigest {
  return { path: shownPath, sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) };
}
