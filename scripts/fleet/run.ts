import { rmSync } from 'node:fs';
import path from 'node:path';
import { namespacesAvailable, removeLeftovers } from './hosts';
import { Cluster, type ClusterOptions } from './cluster';
import type { Fault } from './faults';
import { writeFleetInputs, type RunSettings } from './runConfig';
import { runReference, runScenario, scenarioPassed, type Reference, type ScenarioResult } from './scenarios';
import { runPoolHalf, type PoolHalfResult } from './poolRun';
import { formatScale, runScale, SCALE_ENGINES, type ScaleSummary } from './scale';

// `npm run fleet [-- --scale | --cluster] [--only=name,name] [--keep] [--prefix=xx --subnet=N] [--clean]`: the fault
// matrix on a fleet of namespace hosts (scripts/fleet/hosts.ts), each scenario compared byte for
// byte with an undisturbed run of the same seed; with --scale, the engine-bound throughput table
// (twice) instead; with --cluster, the cluster matrix on two Temporal server nodes over PostgreSQL
// (temporalNodes.ts), then the pool half (poolRun.ts). Ends with one JSON line. Names are prefixed `pfm-` (`pfc-` with --cluster, the
// short test uses `pft-`), and whatever a crashed earlier run left under that prefix is removed first.

function usage(): string {
  return `npm run fleet [-- options]
  (none)               the fault matrix, then the scale table
  --only=a,b           those scenarios alone (of the matrix, or with --cluster of the cluster matrix)
  --scale              the scale table alone
  --cluster            the cluster matrix on two Temporal nodes over PostgreSQL, then the pool half
  --keep               keep /var/tmp/pivot-miner-fleet-<prefix> (host logs, run directories)
  --prefix=xx --subnet=N  another name prefix and /24, to run beside another fleet
  --clean              remove what a killed run left under the prefix, and nothing else
scenarios: ${Object.keys(MATRIX).join(', ')}
cluster scenarios: ${Object.keys(CLUSTER_MATRIX).join(', ')}`;
}

export const MATRIX: Record<string, Fault[]> = {
  collect_partition_healed: [{ kind: 'partition_worker', stage: 'collect' }],
  collect_partition_healed_after_end: [{ kind: 'partition_worker_until_end', stage: 'collect' }],
  collect_lose_worker: [{ kind: 'lose_worker', stage: 'collect' }],
  collect_partition_engine_and_gym: [{ kind: 'partition_engine_and_gym', stage: 'collect' }],
  collect_restart_temporal: [{ kind: 'restart_temporal', stage: 'collect' }],
  local_profile_partition_healed: [{ kind: 'partition_worker', stage: 'local_profile' }],
  local_profile_partition_healed_after_end: [{ kind: 'partition_worker_until_end', stage: 'local_profile' }],
  local_profile_lose_worker: [{ kind: 'lose_worker', stage: 'local_profile' }],
  local_profile_partition_engine_and_gym: [{ kind: 'partition_engine_and_gym', stage: 'local_profile' }],
  local_profile_restart_temporal: [{ kind: 'restart_temporal', stage: 'local_profile' }],
  merge_partition_healed_after_end: [{ kind: 'partition_worker_until_end', stage: 'merge' }],
  merge_lose_worker: [{ kind: 'lose_worker', stage: 'merge' }],
  merge_restart_temporal: [{ kind: 'restart_temporal', stage: 'merge' }],
  finish_partition_healed_after_end: [{ kind: 'partition_worker_until_end', stage: 'finish' }],
  finish_lose_worker: [{ kind: 'lose_worker', stage: 'finish' }],
  finish_restart_temporal: [{ kind: 'restart_temporal', stage: 'finish' }],
  early_partition_healed_after_end: [{ kind: 'partition_worker_until_end', stage: 'early' }],
  early_lose_worker: [{ kind: 'lose_worker', stage: 'early' }],
  early_pause_worker_until_end: [{ kind: 'pause_worker_until_end', stage: 'early' }],
  early_restart_temporal: [{ kind: 'restart_temporal', stage: 'early' }],
};

/** Faults only a production-shaped Temporal has: its nodes and its database. */
export const CLUSTER_MATRIX: Record<string, Fault[]> = {
  collect_lose_temporal_node: [{ kind: 'lose_temporal_node', stage: 'collect' }],
  local_profile_restart_postgres: [{ kind: 'restart_postgres', stage: 'local_profile' }],
  merge_lose_temporal_node: [{ kind: 'lose_temporal_node', stage: 'merge' }],
};

export const SETTINGS: RunSettings = {
  seed: 7,
  numRepeats: 8,
  chunkSize: 32,
  maxConcurrency: 2,
  workers: 2,
  watchSeconds: 30,
  partitionSeconds: 25,
};

/**
 * Characters added to each task's system prompt in the runs of the `early_*` scenarios (and their
 * own reference): with them the filing passes walk about 130 MB of local-profile rows and run for
 * seconds, long enough for a fault to land inside one, while the engines' work stays the same.
 */
export const EARLY_PROMPT_PADDING_CHARS = 64_000;

/** The settings a scenario runs with: those aimed at early profiling's filing passes pad the prompts. */
function settingsFor(faults: Fault[], settings: RunSettings): RunSettings {
  return faults.some((f) => f.stage === 'early')
    ? { ...settings, promptPaddingChars: EARLY_PROMPT_PADDING_CHARS }
    : settings;
}

/** Engines slow enough that a chunk of 32 takes tens of seconds at 2 requests in flight, as in the runs. */
export const FAULT_ENGINES = { engines: 2, engineLatencyMs: 100, engineSlots: 4 };

export function clusterOptions(prefix: string, subnet: number, extra: Partial<ClusterOptions> = {}): ClusterOptions {
  return {
    prefix,
    subnet,
    baseDir: path.join('/var/tmp', `pivot-miner-fleet-${prefix}`),
    seed: 7,
    taskQueue: `fleet-${prefix}`,
    temporal: 'dev',
    ...FAULT_ENGINES,
    ...extra,
  };
}

export async function runMatrix(
  cluster: Cluster,
  matrix: Record<string, Fault[]>,
  names: string[],
  settings: RunSettings,
  log: (l: string) => void,
): Promise<{ reference: Reference; results: ScenarioResult[] }> {
  // One undisturbed run per distinct settings, made before the first scenario that needs it.
  const references = new Map<string, { reference: Reference; config: string }>();
  const results: ScenarioResult[] = [];
  for (const name of names) {
    const s = settingsFor(matrix[name]!, settings);
    const key = JSON.stringify(s);
    let ref = references.get(key);
    if (!ref) {
      const config = writeFleetInputs(cluster, s);
      const label = s.promptPaddingChars ? 'reference-padded' : 'reference';
      ref = { reference: await runReference(cluster, s, config, log, label), config };
      references.set(key, ref);
    }
    const r = await runScenario(cluster, name, matrix[name]!, ref.reference, s, ref.config, log);
    log(`[fleet] ${name}: ${scenarioPassed(r) ? 'ok' : 'FAILED'} ${JSON.stringify(r)}`);
    results.push(r);
  }
  // The pool half (on --cluster, whose scenarios all run plain) follows on the plain settings' reference.
  const plain = references.get(JSON.stringify(settings)) ?? [...references.values()][0];
  if (!plain) throw new Error('no scenario to run');
  return { reference: plain.reference, results };
}

function scenarioLine(r: ScenarioResult): string {
  const retried = Object.values(r.retried_lines).reduce((a, b) => a + b, 0);
  return (
    `${scenarioPassed(r) ? 'ok    ' : 'FAILED'} ${r.name.padEnd(42)} identical ${r.identical}  dup/missing keys ${r.duplicate_keys}/${r.missing_keys}  ` +
    `writes after completion ${r.writes_after_completion}  retried lines ${retried} (unexplained ${r.unexplained_retried_lines})  hit ${r.hit.join(',')}  ${r.seconds.toFixed(0)} s` +
    `\n       steps hit: ${r.steps.map((x) => x || '-').join(', ')}` +
    (r.unretried_steps.length ? `  NOT RETRIED (the fault missed): ${r.unretried_steps.join(', ')}` : '') +
    `\n       activity retries: ${JSON.stringify(r.retried_activities)}` +
    (r.differing.length ? `\n       differing: ${r.differing.join(', ')}` : '') +
    (r.changed_after_completion.length
      ? `\n       changed after completion: ${r.changed_after_completion.join(', ')}`
      : '')
  );
}

async function withCluster<T>(opts: ClusterOptions, keep: boolean, body: (cluster: Cluster) => Promise<T>): Promise<T> {
  const cluster = await Cluster.start(opts);
  try {
    return await body(cluster);
  } finally {
    await cluster.close();
    if (!keep) rmSync(opts.baseDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log(usage());
    return;
  }
  const available = namespacesAvailable();
  if (!available.ok) throw new Error(available.reason);
  const log = (l: string) => console.error(l);
  const keep = args.includes('--keep');
  const only = args
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  // Plain `npm run fleet`: the matrix, then the scale table; --scale: the table alone; --only: those scenarios alone.
  const scaleOnly = args.includes('--scale');
  // --cluster: the cluster matrix alone, on its own prefix and /24 so it can run beside a plain run.
  const onCluster = args.includes('--cluster');
  const matrix = onCluster ? CLUSTER_MATRIX : MATRIX;
  // Another prefix and /24 for a second run beside this one (a run clears its own prefix's leftovers).
  const prefix = args.find((a) => a.startsWith('--prefix='))?.slice('--prefix='.length) ?? (onCluster ? 'pfc' : 'pfm');
  const subnet = Number(args.find((a) => a.startsWith('--subnet='))?.slice('--subnet='.length) ?? (onCluster ? 3 : 1));
  if (args.includes('--clean')) {
    // What a killed run (SIGKILL: no handler ran) left under this prefix, removed without a new run.
    const left = removeLeftovers(prefix);
    console.log(JSON.stringify({ removed: left }));
    return;
  }
  const summary: {
    scenarios?: Record<string, unknown>;
    pool?: PoolHalfResult | { error: string };
    scale?: Omit<ScaleSummary, 'rounds'>;
  } = {};
  let failed = false;
  if (!scaleOnly) {
    const names = only ?? Object.keys(matrix);
    for (const n of names)
      if (!matrix[n]) throw new Error(`no scenario ${n}; scenarios: ${Object.keys(matrix).join(', ')}`);
    const opts = clusterOptions(prefix, subnet, { temporal: onCluster ? 'cluster' : 'dev' });
    // On a cluster, the pool half follows on the same fleet; its failure is reported, not thrown, so the line still prints.
    const { results, pool } = await withCluster(opts, keep, async (cluster) => {
      const matrixRun = await runMatrix(cluster, matrix, names, SETTINGS, log);
      if (!onCluster) return { results: matrixRun.results, pool: undefined };
      const half = await runPoolHalf(cluster, matrixRun.reference, SETTINGS, log).catch((err: unknown) => ({
        error: err instanceof Error ? err.message : String(err),
      }));
      return { results: matrixRun.results, pool: half };
    });
    console.log('fleet scenarios (each against an undisturbed run of the same seed on the same fleet)');
    for (const r of results) console.log(scenarioLine(r));
    summary.scenarios = Object.fromEntries(
      results.map((r) => [
        r.name,
        {
          identical: r.identical,
          duplicate_keys: r.duplicate_keys,
          missing_keys: r.missing_keys,
          writes_after_completion: r.writes_after_completion,
          retried_lines: Object.values(r.retried_lines).reduce((a, b) => a + b, 0),
          retried_activities: r.retried_activities,
        },
      ]),
    );
    if (pool) summary.pool = pool;
    failed = results.some((r) => !scenarioPassed(r)) || (pool !== undefined && 'error' in pool);
  }
  if (scaleOnly || (!only && !onCluster)) {
    const scale = await withCluster(clusterOptions(prefix, subnet, SCALE_ENGINES), keep, (cluster) =>
      runScale(cluster, log),
    );
    scale.rounds.forEach((rows, i) => console.log(formatScale(rows, i + 1)));
    const { rounds: _rounds, ...ratios } = scale;
    summary.scale = ratios;
  }
  console.log(JSON.stringify(summary));
  if (failed) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`fleet run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  });
}
