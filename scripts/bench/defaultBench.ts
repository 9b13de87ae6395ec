import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { closePools } from '../../activities/http/client';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { ensureDevServer } from '../lib/devServer';
import { freePort } from '../lib/net';
import { CONCURRENCY, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNKS_IN_FLIGHT, loadNow, type Bench } from './benchContext';
import { childPidsMatching } from './cpu';
import { candidatesFrom, localProfileRun, sampleCandidates, type ScaleRun } from './scale';
import { historyLines, scaleLines } from './scaleReport';
import { startSimulatorProcess } from './services';
import { measureThroughput, type ThroughputResult } from './throughput';
import {
  durableOverBare,
  durableOverBareRolloutsAlone,
  durableOverBareSimulatorsEqual,
  rateOf,
  throughputLines,
  withoutTemporalRatios,
} from './throughputReport';

// `npm run bench` without --peer or --overlap: orchestration overhead against a bare HTTP loop,
// worker memory and history size, on the simulators with zero added latency (scripts/bench/run.ts
// reads the flags into these options).

export interface DefaultBenchOptions {
  quick: boolean;
  million: boolean;
  /** The simulators on CPU 0 alone, everything else on the other CPUs: a diagnostic. */
  pinSimulators: boolean;
  workerMaxOldSpaceMb?: number;
  workerNodeOptions?: string;
  workerHeapProbe: boolean;
  workerCpuProfileDir?: string;
  chunkSize: number;
  chunksInFlight: number;
  cycles: number;
  /** `throughput` or `scale`: that figure alone. */
  only?: string;
  throughput: { tasks: number; numRepeats: number; withoutTemporal: boolean };
  scaleRows: number[];
  keep: boolean;
}

const TARGETS = { durableOverBare: 0.95, durableOverBareAt4x: 0.9, rssRatio: 1.2, idleRssMb: 200 };
const MB = 1024 * 1024;
const productChunking = (o: DefaultBenchOptions) =>
  o.chunkSize === DEFAULT_CHUNK_SIZE && o.chunksInFlight === DEFAULT_CHUNKS_IN_FLIGHT;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.log(line);

/** The throughput and scale figures, on a dev server and simulators of their own. */
export async function runDefaultBench(o: DefaultBenchOptions): Promise<void> {
  if (o.pinSimulators) {
    const cpus = os.availableParallelism();
    if (cpus < 2) throw new Error(`--pin-simulators needs 2 CPUs or more, this process may use ${cpus}`);
    // Before anything is spawned: the dev server and the workers inherit this process's CPUs.
    execFileSync('taskset', ['-a', '-p', '-c', `1-${cpus - 1}`, String(process.pid)], { stdio: 'ignore' });
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-bench-'));
  const server = await ensureDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    stateDir: path.join(dir, 'state'),
  });
  const sims = await startSimulatorProcess(7, o.pinSimulators ? { cpu: 0 } : {});
  const connection = await Connection.connect({ address: server.address });
  const [temporalPid] = childPidsMatching('start-dev');
  if (temporalPid === undefined)
    throw new Error('the Temporal dev server is not a child of the bench (a reused server cannot be measured)');
  const loadAtStart = loadNow();
  const bench: Bench = {
    client: new Client({ connection }),
    temporalAddress: server.address,
    temporalPid,
    sims,
    dir,
    workerMaxOldSpaceMb: o.workerMaxOldSpaceMb,
    workerNodeOptions: o.workerNodeOptions,
    workerHeapProbe: o.workerHeapProbe,
    workerCpuProfileDir: o.workerCpuProfileDir,
    chunkSize: o.chunkSize,
    chunksInFlight: o.chunksInFlight,
  };
  try {
    logSetup(o, bench, loadAtStart);
    const throughputs = await throughputFigures(o, bench);
    const scale = await scaleFigures(o, bench, throughputs);
    console.log(JSON.stringify(summary(o, throughputs, scale, loadAtStart)));
    // A worker that died is printed as a figure above, and still fails the run.
    if (scale.some((s) => s.failure)) process.exitCode = 1;
  } finally {
    // The bare loop's /aggregate_metrics call and the side without Temporal (--without-temporal) ran
    // the activities' keep-alive pools in this process.
    await closePools();
    await connection.close();
    await sims.stop();
    await server.stop();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** What the figures below were measured on, and each setting that makes them not the product's. */
function logSetup(o: DefaultBenchOptions, bench: Bench, loadAtStart: string): void {
  log(
    `pivot-miner bench${o.quick ? ' --quick' : ''}${o.million ? ' --million' : ''}: Temporal dev server ${bench.temporalAddress}, simulators (zero added latency) in their own process, ` +
      `${os.cpus().length} CPUs, load ${loadAtStart}`,
  );
  if (o.pinSimulators)
    log(
      '--pin-simulators: the simulators on CPU 0 alone, this process, the dev server and the workers on the others (both sides alike); a diagnostic, NOT the default figure',
    );
  log(
    `worker = \`pivot-miner worker\` child process (one fresh per figure); chunk_size ${o.chunkSize}, ${o.chunksInFlight} chunks in flight, ` +
      `max_concurrency ${CONCURRENCY} (${productChunking(o) ? 'the product defaults' : `NOT the product defaults ${DEFAULT_CHUNK_SIZE} / ${DEFAULT_CHUNKS_IN_FLIGHT}: figures for a candidate default only`}); work dir ${bench.dir}`,
  );
  const heapEnv =
    o.workerMaxOldSpaceMb === undefined
      ? process.env
      : { ...process.env, PIVOT_MINER_WORKER_HEAP_MB: String(o.workerMaxOldSpaceMb) };
  const workerEnv = workerProcessEnv(heapEnv);
  const mallocFromEnv = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_'].filter(
    (name) => process.env[name] !== undefined,
  );
  log(
    `worker memory: ${workerHeapArgs(heapEnv).join(' ') || "Node's default V8 heap"}, MALLOC_ARENA_MAX=${workerEnv.MALLOC_ARENA_MAX ?? "glibc's default"}, ` +
      `MALLOC_MMAP_THRESHOLD_=${workerEnv.MALLOC_MMAP_THRESHOLD_ ?? "glibc's default (dynamic)"}` +
      `${o.workerMaxOldSpaceMb !== undefined ? ' (--worker-max-old-space-mb, NOT the product default)' : mallocFromEnv.length > 0 ? ` (${mallocFromEnv.join(', ')} from the environment, NOT the product default)` : ' (the product default)'}`,
  );
  if (bench.workerCpuProfileDir) {
    mkdirSync(bench.workerCpuProfileDir, { recursive: true });
    log(
      `--worker-cpu-profile: workers write CPU profiles in 15 s slices to ${bench.workerCpuProfileDir}; the sampler costs them CPU, so the ratios are not the product's`,
    );
  }
  if (o.workerHeapProbe)
    log(
      "--worker-heap: workers force a full GC every 5 s to sample their live heap, so their RSS figures are lower than the product's",
    );
}

/** Durable collect against the bare loop, at the product's concurrency and at four times it. */
async function throughputFigures(o: DefaultBenchOptions, bench: Bench): Promise<ThroughputResult[]> {
  const throughputs: ThroughputResult[] = [];
  if (o.only === 'scale' || o.million) return throughputs;
  for (const [concurrency, target] of [
    [CONCURRENCY, TARGETS.durableOverBare],
    [4 * CONCURRENCY, TARGETS.durableOverBareAt4x],
  ] as const) {
    const tp = await measureThroughput(bench, { concurrency, cycles: o.cycles, ...o.throughput });
    throughputs.push(tp);
    throughputLines(tp, target).forEach(log);
  }
  return throughputs;
}

/** Local profiling at each of `scaleRows`' sizes: the worker's RSS, and the history events per run. */
async function scaleFigures(
  o: DefaultBenchOptions,
  bench: Bench,
  throughputs: ThroughputResult[],
): Promise<ScaleRun[]> {
  const scale: ScaleRun[] = [];
  if (o.only !== 'throughput') {
    const sample = throughputs[0]?.sample;
    const candidatesSource = sample ? await candidatesFrom(sample.runDir, sample.run) : await sampleCandidates(bench);
    for (const rows of o.scaleRows) {
      const s = await localProfileRun(bench, candidatesSource, rows);
      scale.push(s);
      scaleLines(s, TARGETS.idleRssMb).forEach(log);
    }
  }
  const [small, large] = scale;
  if (small && large) {
    const rssRatio = large.peakRssBytes / small.peakRssBytes;
    // A worker that died has no kernel peak: its highest sample is a floor, and the ratio with it.
    const atLeast = large.failure || small.failure ? 'at least ' : '';
    log(
      `worker peak RSS during the stage, ${large.rows} rows / ${small.rows} rows (baseline) = ${round(large.peakRssBytes / MB, 1)} / ${round(small.peakRssBytes / MB, 1)} MB = ` +
        `${atLeast}${round(rssRatio, 3)} (target <= ${TARGETS.rssRatio}: ${rssRatio <= TARGETS.rssRatio && !atLeast ? 'met' : 'NOT met'}; load ${loadNow()})`,
    );
  }
  const finished = [...scale].reverse().find((s) => s.run);
  if (finished?.run)
    historyLines(finished.rows, finished.run, historyEvents(throughputs, scale), o.chunkSize).forEach(log);
  return scale;
}

const historyEvents = (throughputs: ThroughputResult[], scale: ScaleRun[]): number[] =>
  [...throughputs.map((t) => t.sample.run), ...scale.map((s) => s.run)].flatMap((r) => r?.historyEventsPerRun ?? []);

/** The run's last line: every figure as one JSON object. */
function summary(
  o: DefaultBenchOptions,
  throughputs: ThroughputResult[],
  scale: ScaleRun[],
  loadAtStart: string,
): Record<string, unknown> {
  const [tp16, tp64] = throughputs;
  const [small, large] = scale;
  const rate = (t: ThroughputResult | undefined, side: 'bare' | 'durable') => (t ? round(rateOf(t[side]), 1) : null);
  const ratio = (t: ThroughputResult | undefined, of: (tp: ThroughputResult) => number = durableOverBare) =>
    t ? round(of(t), 3) : null;
  const withoutTemporal = tp16 && withoutTemporalRatios(tp16);
  const allRuns = historyEvents(throughputs, scale);
  return {
    mode: o.million ? 'million' : o.quick ? 'quick' : 'default',
    pinned_simulators: o.pinSimulators,
    chunk_size: o.chunkSize,
    chunks_in_flight: o.chunksInFlight,
    product_defaults: productChunking(o),
    load_start_end: [loadAtStart, loadNow()],
    worker_max_old_space_mb: o.workerMaxOldSpaceMb ?? null,
    bare_rollouts_per_s: rate(tp16, 'bare'),
    durable_rollouts_per_s: rate(tp16, 'durable'),
    durable_over_bare: ratio(tp16),
    durable_over_bare_4x_concurrency: ratio(tp64),
    durable_over_bare_rollouts_alone: ratio(tp16, durableOverBareRolloutsAlone),
    durable_over_bare_4x_concurrency_rollouts_alone: ratio(tp64, durableOverBareRolloutsAlone),
    durable_over_bare_simulators_cpu_equal: ratio(tp16, durableOverBareSimulatorsEqual),
    durable_over_bare_4x_concurrency_simulators_cpu_equal: ratio(tp64, durableOverBareSimulatorsEqual),
    without_temporal_over_bare: withoutTemporal ? round(withoutTemporal.stageOverBare, 3) : null,
    durable_over_without_temporal: withoutTemporal ? round(withoutTemporal.durableOverStage, 3) : null,
    rss_rows: scale.map((s) => s.rows),
    rss_mb: scale.map((s) => round(s.peakRssBytes / MB, 1)),
    startup_peak_rss_mb: scale.map((s) => round(s.startupPeakRssBytes / MB, 1)),
    rss_large_over_small: small && large ? round(large.peakRssBytes / small.peakRssBytes, 3) : null,
    idle_rss_mb_before_after: large
      ? [round(large.idleRssBeforeBytes / MB, 1), round(large.idleRssAfterBytes / MB, 1)]
      : null,
    history_events_max_per_run: allRuns.length > 0 ? Math.max(...allRuns) : null,
    scale_failures: scale.flatMap((s) => (s.failure ? [`${s.rows}: ${s.failure}`] : [])),
    local_profile_rollouts: large?.rows ?? null,
    local_profile_rollouts_per_s: large?.run ? round(large.rows / large.run.seconds, 1) : null,
  };
}
