import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { materializedRowSchema } from '../../gym/schemas';
import { faultRequestKey, type FaultEvent } from '../../servers/faults';
import { type FaultKind } from '../../contracts/faultsConfig';
import { PUBLISHED_DIGESTS_FILE } from '../../gym/publishedDigests';
import { PREFETCH_DIR } from '../../activities/early/prefetch';
import { prefetchedDir } from '../../activities/early/filedChunks';
import { isEngineTimeline } from '../../activities/run/engineTimeline';

// What a chaos run must leave behind: the same artifacts as an undisturbed run of the same seed, no
// duplicate or missing rollout keys, and a failures sidecar that only records faults we injected.

type Row = Record<string, unknown> & { _ng_task_index: number; _ng_rollout_index: number };
const rowKey = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;

function readLines(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
}

function readRows<T = Row>(file: string): T[] {
  return readLines(file).map((l) => JSON.parse(l) as T);
}

export function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(dir, child));
    else out.push(child);
  }
  return out.sort();
}

/**
 * Early local profiling's files (`overlap: true`): a finished run has removed them, whatever became of
 * early profiling, so any found after a run was left behind (their contents depend on where collect's
 * chunks happened to have finished; what the run reused from them is in its own files).
 */
export const isEarlyProfiling = (rel: string) =>
  rel.startsWith(`${PREFETCH_DIR}${path.sep}`) || rel.startsWith(`${prefetchedDir('local_profile')}${path.sep}`);

/**
 * Files that legitimately differ: failure sidecars (the undisturbed run has none), shards (written in
 * completion order, merged deterministically), the config snapshot, compared without `faults`, and
 * the engine timeline (wall-clock times), the published-files digests, which cover the failure sidecars and the run records compared here
 * without their faults and attempt counts (every file they name is compared itself).
 */
const isVolatile = (rel: string) =>
  rel.includes('_shards/') ||
  isEngineTimeline(rel) ||
  rel.endsWith('_failures.jsonl') ||
  rel === 'pipeline_config.yaml' ||
  rel === PUBLISHED_DIGESTS_FILE;

/** What a run's identity and accounting must agree on across faults: not its config's `faults` (nor
 * the digest that covers them), and not its count of failed attempts, which are the faults' own
 * record (the failures sidecars, compared apart). Every expected, succeeded, failed and omitted
 * count must still match. */
const ATTEMPT_COUNTS = new Set(['failed_attempts', 'recovered', 'rollout_failures', 'local_profile_failures']);

function withoutAttemptCounts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAttemptCounts);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !ATTEMPT_COUNTS.has(key))
      .map(([key, v]) => [key, withoutAttemptCounts(v)]),
  );
}

function normalizedRunRecord(rel: string, text: string): string {
  const record = JSON.parse(text) as { config?: { servers?: { faults?: unknown } }; config_sha256?: unknown };
  if (rel === 'run_manifest.json') {
    delete record.config?.servers?.faults;
    delete record.config_sha256;
    return JSON.stringify(record);
  }
  return JSON.stringify(withoutAttemptCounts(record));
}

function normalized(file: string, runDir: string): string {
  const text = readFileSync(file, 'utf8').split(runDir).join('<run_dir>');
  const rel = path.relative(runDir, file);
  if (rel === 'run_manifest.json' || rel === 'run_summary.json') return normalizedRunRecord(rel, text);
  // The report's accounting table shows the same counts as run_summary.json, attempts included.
  if (rel === path.join('dataset', 'report.html'))
    return text.replace(/<table id="rollout-accounting">[\s\S]*?<\/table>/, '');
  return file.endsWith('.jsonl')
    ? text
        .split('\n')
        .filter((l) => l !== '')
        .sort()
        .join('\n')
    : text;
}

function configWithoutFaults(file: string): unknown {
  const config = YAML.parse(readFileSync(file, 'utf8')) as { servers?: { faults?: unknown } };
  delete config.servers?.faults;
  return config;
}

export interface ArtifactComparison {
  identical: boolean;
  filesCompared: number;
  differing: string[];
}

export function compareRunDirs(reference: string, candidate: string): ArtifactComparison {
  const refFiles = listFiles(reference).filter((f) => !isVolatile(f));
  const candFiles = new Set(listFiles(candidate).filter((f) => !isVolatile(f)));
  const differing: string[] = [];
  for (const rel of refFiles) {
    if (isEarlyProfiling(rel)) {
      candFiles.delete(rel);
      differing.push(`${rel} (early profiling left behind by the reference run)`);
    } else if (!candFiles.delete(rel)) differing.push(`${rel} (missing)`);
    else if (rel.endsWith('.bin')) {
      if (!readFileSync(path.join(reference, rel)).equals(readFileSync(path.join(candidate, rel)))) differing.push(rel);
    } else if (normalized(path.join(reference, rel), reference) !== normalized(path.join(candidate, rel), candidate))
      differing.push(rel);
  }
  differing.push(
    ...[...candFiles].map((rel) => `${rel} (${isEarlyProfiling(rel) ? 'early profiling left behind' : 'extra'})`),
  );
  const refConfig = configWithoutFaults(path.join(reference, 'pipeline_config.yaml'));
  if (JSON.stringify(refConfig) !== JSON.stringify(configWithoutFaults(path.join(candidate, 'pipeline_config.yaml')))) {
    differing.push('pipeline_config.yaml (beyond servers.faults)');
  }
  return { identical: differing.length === 0, filesCompared: refFiles.length + 1, differing };
}

export interface KeyCheck {
  duplicateKeys: number;
  missingKeys: number;
}

/**
 * Every materialized key has exactly one result in each stage's merged rollouts. The keys expected
 * come from `expectedFrom`'s materialized inputs (by default the run's own; a run whose inputs may
 * be lost is checked against an undisturbed run's).
 */
export function checkRolloutKeys(runDir: string, expectedFrom = runDir): KeyCheck {
  let duplicateKeys = 0;
  let missingKeys = 0;
  for (const prefix of ['rollouts', 'local_profile']) {
    const expected = new Set(readRows(path.join(expectedFrom, `${prefix}_materialized_inputs.jsonl`)).map(rowKey));
    const seen = new Set<string>();
    for (const row of readRows(path.join(runDir, `${prefix}.jsonl`))) {
      const k = rowKey(row);
      if (seen.has(k)) duplicateKeys++;
      seen.add(k);
    }
    for (const k of expected) if (!seen.has(k)) missingKeys++;
  }
  return { duplicateKeys, missingKeys };
}

/** The failure class the pipeline's HTTP client records for each injected fault kind. */
export const FAILURE_CLASS_OF: Record<FaultKind, string | undefined> = {
  http_5xx: 'http_5xx',
  http_429: 'http_429',
  hang: 'timeout',
  torn_json: 'invalid_response',
  reset: 'connection',
  slow: undefined,
};

export interface SidecarCheck {
  failureLines: number;
  failureLinesByClass: Record<string, number>;
  /** Failure lines with no injected fault of the matching kind on that request: must be 0. */
  unexplainedLines: number;
  /** Injected faults with no failure line: the attempt died with its worker before recording it. */
  faultsLostWithWorker: number;
  /** Keys that ran out of attempts: 0 when faults are transient enough. */
  exhaustedKeys: number;
}

/**
 * Matches failure lines to fault events per (server, request key, failure class). Collect requests
 * reach the agent front keyed by rollout key; local-profile requests reach the model front keyed
 * by their body, which is the materialized row's responses_create_params as the executor sends it.
 */
export function checkFailuresSidecar(runDir: string, events: FaultEvent[]): SidecarCheck {
  const budget = new Map<string, number>();
  const bump = (k: string, n: number) => budget.set(k, (budget.get(k) ?? 0) + n);
  for (const e of events) {
    const cls = FAILURE_CLASS_OF[e.kind];
    if (cls) bump(`${e.server}|${e.key}|${cls}`, 1);
  }
  const modelKeyOf = new Map<string, string>();
  for (const row of readRows(path.join(runDir, 'local_profile_materialized_inputs.jsonl'))) {
    // Parsed like runChunk parses it, so the text matches what the executor sent byte for byte.
    const text = JSON.stringify(materializedRowSchema.parse(row).responses_create_params);
    modelKeyOf.set(rowKey(row), faultRequestKey(text, JSON.parse(text)));
  }
  const byClass: Record<string, number> = {};
  let failureLines = 0;
  let unexplainedLines = 0;
  let exhaustedKeys = 0;
  for (const [prefix, server] of [
    ['rollouts', 'agent'],
    ['local_profile', 'model'],
  ] as const) {
    const done = new Set(readRows(path.join(runDir, `${prefix}.jsonl`)).map(rowKey));
    const failedKeys = new Set<string>();
    for (const line of readRows<Row & { failure_class: string }>(path.join(runDir, `${prefix}_failures.jsonl`))) {
      failureLines++;
      byClass[line.failure_class] = (byClass[line.failure_class] ?? 0) + 1;
      failedKeys.add(rowKey(line));
      const requestKey = server === 'agent' ? rowKey(line) : modelKeyOf.get(rowKey(line));
      const slot = `${server}|${requestKey}|${line.failure_class}`;
      if ((budget.get(slot) ?? 0) > 0) bump(slot, -1);
      else unexplainedLines++;
    }
    for (const k of failedKeys) if (!done.has(k)) exhaustedKeys++;
  }
  const faultsLostWithWorker = [...budget.values()].reduce((a, b) => a + b, 0);
  return { failureLines, failureLinesByClass: byClass, unexplainedLines, faultsLostWithWorker, exhaustedKeys };
}

export function readFaultEvents(file: string): FaultEvent[] {
  return readRows<FaultEvent>(file);
}
