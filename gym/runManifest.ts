import { z } from 'zod';

// A run's identity: what its artifacts are a function of. Written when the run is prepared, and
// checked first whenever the same run directory is used again, so a resume can only continue the run
// it names: a resumed run with another seed, config or input would otherwise reuse shards made from
// the old ones and publish a dataset its own config does not describe. Pure: hashing and files are
// the activities' part (activities/run/runManifest.ts).

/**
 * The version of everything that shapes the artifacts from a given config and inputs (materialized
 * rows, requests sent to engines, what is kept, what is published). Raise it with every change that
 * makes the same config and inputs give different artifacts, so a run begun before such a change is
 * refused instead of being finished with a mix of both.
 *
 * 2: local-profile Chat Completions requests carry no `tool_calls: []` on assistant turns without
 * calls; rollout accounting and incomplete local profiles held back.
 * 3: rollout digests (the `/aggregate_metrics` entries chunks write) keep `response.incomplete_details`
 * and a falsy `response.usage`, as 0.7.0's entries do; a resume must not mix them with older digests.
 * 4: under agent routing, a row its data stamps with an environment server keeps the stamp in its
 * rollout and is grouped by it; the materialized meta records the stamps, which older stages lack.
 */
export const PIPELINE_VERSION = 'pivot-miner/4';

export const RUN_MANIFEST_FILE = 'run_manifest.json';

const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

const fileDigestSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe('As the config names it (relative to the worker base directory) or the run directory names it'),
  sha256: sha256Schema,
  bytes: z.number().int().nonnegative(),
});
export type FileDigest = z.infer<typeof fileDigestSchema>;

export const runManifestSchema = z.strictObject({
  manifest_version: z.literal(1),
  pipeline_version: z.string().min(1),
  /** sha256 of the canonical JSON of `config` (keys sorted), one value to compare runs by. */
  config_sha256: sha256Schema,
  /** The resolved config: the YAML with its defaults filled in and the workflow input's overrides applied. */
  config: z.record(z.string(), z.unknown()),
  /** Input files by the config key that names them, e.g. `collect.input_jsonl`. */
  inputs: z.record(z.string(), fileDigestSchema),
  /** Materialized inputs by rollout stage, recorded once each is made. */
  materialized: z.record(z.string(), fileDigestSchema),
});
export type RunManifest = z.infer<typeof runManifestSchema>;

/** JSON with object keys sorted at every level, so equal values give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** Leaves of a config by dotted key; arrays are leaves, since an element has no meaning alone. */
function flatten(value: unknown, prefix: string, out: Map<string, unknown>): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && prefix !== '') out.set(prefix, {});
    for (const [k, v] of entries) flatten(v, prefix === '' ? k : `${prefix}.${k}`, out);
  } else if (value !== undefined) {
    out.set(prefix, value);
  }
  return out;
}

const shown = (value: unknown): string => (value === undefined ? '(unset)' : canonicalJson(value));
const shortDigest = (d: FileDigest | undefined): string => (d === undefined ? '(none)' : `${d.sha256.slice(0, 12)}…`);

function digestDifferences(
  label: (key: string) => string,
  recorded: Record<string, FileDigest>,
  current: Record<string, FileDigest>,
): string[] {
  const keys = [...new Set([...Object.keys(recorded), ...Object.keys(current)])].sort();
  return keys.flatMap((key) => {
    const was = recorded[key];
    const now = current[key];
    if (was?.sha256 === now?.sha256) return [];
    return [`${label(key)} sha256 ${shortDigest(was)} -> ${shortDigest(now)}`];
  });
}

/**
 * Every item in which `current` differs from the recorded manifest, one line each and in a fixed
 * order: the pipeline version, then config keys (`seed: 7 -> 8`), then input files by content, then
 * materialized inputs. Materialized inputs are compared only for stages both have made, since a
 * resumed run has not yet made them when it is checked. Empty when the run may continue.
 */
export function runManifestDifferences(recorded: RunManifest, current: RunManifest): string[] {
  const out: string[] = [];
  if (recorded.pipeline_version !== current.pipeline_version) {
    out.push(`pipeline_version: ${recorded.pipeline_version} -> ${current.pipeline_version}`);
  }
  if (recorded.config_sha256 !== current.config_sha256) {
    const was = flatten(recorded.config, '', new Map());
    const now = flatten(current.config, '', new Map());
    const keys = [...new Set([...was.keys(), ...now.keys()])].sort();
    for (const key of keys) {
      if (canonicalJson(was.get(key)) !== canonicalJson(now.get(key)))
        out.push(`${key}: ${shown(was.get(key))} -> ${shown(now.get(key))}`);
    }
  }
  out.push(...digestDifferences((key) => key, recorded.inputs, current.inputs));
  const made = (m: Record<string, FileDigest>, other: Record<string, FileDigest>) =>
    Object.fromEntries(Object.entries(m).filter(([k]) => k in other));
  out.push(
    ...digestDifferences(
      (stage) => `${stage} materialized inputs`,
      made(recorded.materialized, current.materialized),
      made(current.materialized, recorded.materialized),
    ),
  );
  return out;
}

/** The message of a refused resume: what differs, and what the user can do about it. */
export function runIdentityMessage(what: string, differences: readonly string[], manifestPath: string): string {
  return (
    `${what} was started with another config, inputs or pipeline version, so it cannot be resumed with these ` +
    `(recorded in ${manifestPath}); nothing in it was changed. Differences:\n` +
    differences.map((d) => `  ${d}`).join('\n') +
    '\nStart a new run id (or pool/curriculum) for the new settings, or resume with the recorded ones.'
  );
}
