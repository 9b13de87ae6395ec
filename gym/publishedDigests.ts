import { z } from 'zod';
import { RUN_MANIFEST_FILE } from './runManifest';

// What each step of a run published, by content: a resume or `pivot-miner check` compares the run
// directory with it and finds a file truncated or changed since (a full disk, a bad copy, a hand edit).
// Pure: hashing, reading and removing files are the activities' part (activities/run/publishedDigests.ts).

export const PUBLISHED_DIGESTS_FILE = 'published_digests.json';

const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

const publishedFileSchema = z.strictObject({
  /** The step that published it: `prepare`, `collect materialize`, `local_profile finish`, `convert`, `publish`. */
  step: z.string().min(1),
  sha256: sha256Schema,
  bytes: z.number().int().nonnegative(),
});
export type PublishedFile = z.infer<typeof publishedFileSchema>;

export const publishedDigestsSchema = z.strictObject({
  digests_version: z.literal(1),
  /** By path relative to the run directory. */
  files: z.record(z.string().min(1), publishedFileSchema),
});
export type PublishedDigests = z.infer<typeof publishedDigestsSchema>;

export const NO_PUBLISHED_DIGESTS: PublishedDigests = { digests_version: 1, files: {} };

/**
 * The sidecar with `files` recorded, its keys sorted so the same files give the same bytes. A file
 * recorded with the same content keeps its entry: the step that first published those bytes (a
 * resume's prepare finds the manifest a materialize last wrote), so a resume rewrites nothing.
 */
export function withPublished(recorded: PublishedDigests, files: Record<string, PublishedFile>): PublishedDigests {
  const changed = Object.entries(files).filter(([file, entry]) => {
    const was = recorded.files[file];
    return was === undefined || was.sha256 !== entry.sha256 || was.bytes !== entry.bytes;
  });
  const merged = { ...recorded.files, ...Object.fromEntries(changed) };
  const sorted = Object.keys(merged).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { digests_version: 1, files: Object.fromEntries(sorted.map((file) => [file, merged[file]!])) };
}

/**
 * What a resume does about a damaged file:
 * - `refuse`: nothing in the run directory can make it again: the run manifest, missing or no longer
 *   a run manifest. It is the record a resume is checked against; rebuilding it from the resume's
 *   own config would accept any config.
 * - `identity`: the run manifest, changed but still one (a step that rewrote it stopped before it
 *   recorded it, or a hand edit). The resume checks it as it checks every manifest: the config and
 *   inputs, then each stage's materialized inputs; it goes on only if they all match.
 * - `rebuild`: a file the resume would reuse. A stage's materialized inputs and their indexes are
 *   made again from the stage's input (the run manifest then checks the rows are the recorded ones).
 * - `rewritten`: a file every resume writes again from the shards and the files before it (merged
 *   rollouts, reward profile, metrics, candidates, the dataset); it is only removed, so nothing reads
 *   the damaged bytes meanwhile.
 */
export type Remedy = 'refuse' | 'identity' | 'rebuild' | 'rewritten';

const MATERIALIZED = /^(.*)_materialized_inputs\.(jsonl|offsets\.bin|rows\.bin|meta\.json)$/;

/** `manifestReadable`: the run manifest found is one this version reads. */
export function remedyOf(file: string, manifestReadable: boolean): Remedy {
  if (file === RUN_MANIFEST_FILE) return manifestReadable ? 'identity' : 'refuse';
  return MATERIALIZED.test(file) ? 'rebuild' : 'rewritten';
}

/** The meta file whose absence makes materialization start over, for a materialized file; else undefined. */
export function materializedMetaOf(file: string): string | undefined {
  const stem = MATERIALIZED.exec(file)?.[1];
  return stem === undefined ? undefined : `${stem}_materialized_inputs.meta.json`;
}

export interface Found {
  sha256: string;
  bytes: number;
}

/** A recorded file whose content is not the recorded one; `found` is undefined for a missing file. */
export interface DamagedFile {
  file: string;
  recorded: PublishedFile;
  found: Found | undefined;
  remedy: Remedy;
}

/** Damaged files of the recorded ones, in the sidecar's (sorted) order; `found` is each file's content now. */
export function damagedFiles(
  recorded: PublishedDigests,
  found: ReadonlyMap<string, Found | undefined>,
  manifestReadable: boolean,
): DamagedFile[] {
  return Object.entries(recorded.files).flatMap(([file, entry]) => {
    const now = found.get(file);
    if (now !== undefined && now.sha256 === entry.sha256 && now.bytes === entry.bytes) return [];
    return [{ file, recorded: entry, found: now, remedy: remedyOf(file, manifestReadable) }];
  });
}

function kindOf({ recorded, found }: DamagedFile): string {
  if (found === undefined) return 'missing';
  return found.bytes < recorded.bytes ? 'truncated' : 'changed';
}

const REMEDY_TEXT: Record<Remedy, (d: DamagedFile) => string> = {
  refuse: () => 'it cannot be rebuilt, so the run refuses to resume; start a new run id',
  identity: () => 'a resume goes on only if it still names this run (config, inputs, materialized inputs)',
  rebuild: (d) => `a resume makes it again from the stage's input (published by ${d.recorded.step})`,
  rewritten: (d) => `a resume writes it again (published by ${d.recorded.step})`,
};

/** One line naming the file, what was expected and found, and what a resume does about it. */
export function damageLine(runDir: string, damaged: DamagedFile): string {
  const { file, recorded, found } = damaged;
  const foundText = found === undefined ? 'no file' : `sha256 ${found.sha256} (${found.bytes} bytes)`;
  return (
    `${runDir}/${file} is ${kindOf(damaged)} since it was published: expected sha256 ${recorded.sha256} ` +
    `(${recorded.bytes} bytes), found ${foundText}; ${REMEDY_TEXT[damaged.remedy](damaged)}`
  );
}
