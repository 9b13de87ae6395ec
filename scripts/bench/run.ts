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
import { parseFlags, refuse, wholeNumber } from './flags';
import { runOverlapBench } from './overlap';
import { runPeerBench } from './peer';
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

// `npm run bench` (flags in USAGE below): orchestration overhead against a bare HTTP loop, worker
// memory and history size, measured in one run on the simulators with zero added latency. The last line is one JSON object so the figures
// can be tracked run to run. Every figure is printed with the machine's load beside it: on a busy
// machine the ratios are noise-bound and must be re-run on a quiet one.

const USAGE =
  'npm run bench -- [--quick | --million] [--cycles=N] [--only=throughput|scale] [--rows=small,large] [--keep] [--worker-heap] ' +
  '[--worker-max-old-space-mb=N] [--worker-node-options="..."] [--chunk-size=N] [--chunks-in-flight=N] [--tasks=N] [--without-temporal] ' +
  '[--worker-cpu-profile=DIR] [--pin-simulators]\n' +
  '       npm run bench -- --overlap [--quick] [--repeats=N] [--latency-ms=N] [--slots=N] [--source-slots=N] [--rounds=N] [--keep]\n' +
  '       npm run bench -- --peer | --only=peer [--nemo-gym=0.7.0|0.4.0] [--repeats=N] [--cycles=N] [--chunk-size=N] [--worker-node-options="..."] [--pivots=PIVOTS.jsonl] [--worker-cpu-profile=DIR] [--keep]';
const flags = parseFlags(USAGE, {
  quick: { type: 'boolean' },
  million: { type: 'boolean' },
  cycles: { type: 'string' },
  only: { type: 'string' },
  rows: { type: 'string' },
  keep: { type: 'boolean' },
  'worker-heap': { type: 'boolean' },
  'worker-max-old-space-mb': { type: 'string' },
  'worker-node-options': { type: 'string' },
  'chunk-size': { type: 'string' },
  'chunks-in-flight': { type: 'string' },
  tasks: { type: 'string' },
  'without-temporal': { type: 'boolean' },
  'worker-cpu-profile': { type: 'string' },
  'pin-simulators': { type: 'boolean' },
  peer: { type: 'boolean' },
  repeats: { type: 'string' },
  pivots: { type: 'string' },
  'nemo-gym': { type: 'string' },
  overlap: { type: 'boolean' },
  'latency-ms': { type: 'string' },
  slots: { type: 'string' },
  'source-slots': { type: 'string' },
  rounds: { type: 'string' },
});
if (flags.only !== undefined && !['throughput', 'scale', 'peer'].includes(flags.only))
  refuse(`--only=${flags.only}: expected throughput, scale or peer`);
// The peer bench (scripts/bench/peer.ts): ng_collect_rollouts against our collect stage on the same
// NeMo Gym servers. It sets up its own servers, so the other benches' flags do not apply to it.
const peer = flags.peer === true || flags.only === 'peer';
const PEER_FLAGS = new Set([
  'peer',
  'only',
  'repeats',
  'cycles',
  'chunk-size',
  'worker-node-options',
  'pivots',
  'nemo-gym',
  'worker-cpu-profile',
  'keep',
]);
const notForPeer = Object.keys(flags).filter((name) => !PEER_FLAGS.has(name));
if (peer && notForPeer.length > 0)
  refuse(`--${notForPeer.join(', --')}: not a flag of the peer bench\nusage: ${USAGE}`);
// The overlap bench (scripts/bench/overlap.ts): the pipeline on two engine simulators with slots.
const overlapBench = flags.overlap === true;
const OVERLAP_FLAGS = new Set(['overlap', 'quick', 'repeats', 'latency-ms', 'slots', 'source-slots', 'rounds', 'keep']);
const notForOverlap = Object.keys(flags).filter((name) => !OVERLAP_FLAGS.has(name));
if (overlapBench && notForOverlap.length > 0)
  refuse(`--${notForOverlap.join(', --')}: not a flag of the overlap bench\nusage: ${USAGE}`);
if (!overlapBench && ['latency-ms', 'slots', 'source-slots', 'rounds'].some((name) => name in flags))
  refuse(
    `--latency-ms, --slots, --source-slots and --rounds are flags of the overlap bench (--overlap)\nusage: ${USAGE}`,
  );
if (!peer && !overlapBench && (flags.repeats !== undefined || flags.pivots !== undefined))
  refuse(`--repeats and --pivots are flags of the peer bench (--peer)\nusage: ${USAGE}`);
if (!peer && flags['nemo-gym'] !== undefined)
  refuse(`--nemo-gym is a flag of the peer bench (--peer)\nusage: ${USAGE}`);
// Side A is the NeMo Gym release users install unless told otherwise; 0.4.0 is the one the
// figures of issue 42 were taken against.
const nemoGym =
  (['0.7.0', '0.4.0'] as const).find((version) => version === (flags['nemo-gym'] ?? '0.7.0')) ??
  refuse(`--nemo-gym=${flags['nemo-gym']}: expected 0.7.0 or 0.4.0`);
// 64 repeats of the demo's pivots, as issue 42 measured them; fewer for a smoke run.
const peerRepeats = wholeNumber('repeats', flags.repeats) ?? 64;
if (flags.pivots === '') refuse('--pivots=FILE needs a published pivots.jsonl (its Gym config YAML beside it)');
const quick = flags.quick === true;
const million = flags.million === true;
const workerMaxOldSpaceMb = wholeNumber('worker-max-old-space-mb', flags['worker-max-old-space-mb'], 0);
const cycles = wholeNumber('cycles', flags.cycles) ?? 1;
const only = flags.only;
const workerNodeOptions = flags['worker-node-options'];
const workerHeapProbe = flags['worker-heap'] === true;
const workerCpuProfileFlag = flags['worker-cpu-profile'];
const workerCpuProfileDir = workerCpuProfileFlag === undefined ? undefined : path.resolve(workerCpuProfileFlag);
const chunkSize = wholeNumber('chunk-size', flags['chunk-size']) ?? DEFAULT_CHUNK_SIZE;
const chunksInFlight = wholeNumber('chunks-in-flight', flags['chunks-in-flight']) ?? DEFAULT_CHUNKS_IN_FLIGHT;
const productChunking = chunkSize === DEFAULT_CHUNK_SIZE && chunksInFlight === DEFAULT_CHUNKS_IN_FLIGHT;

// Tasks per throughput round, each collected 4 times. --tasks changes the round's size to tell the
// per-round costs (workflow tasks, activity hand-offs) from those that grow with the rollouts.
// --without-temporal adds a third throughput side, the stage's activities with no Temporal, to tell
// the stage's own work from what Temporal adds.
// --pin-simulators gives the simulators CPU 0 to themselves and this process, the dev server and
// the workers the other CPUs, on both sides alike: the model server's CPU is its own, as where it runs
// on other hardware. It tells how much of durable / bare is the sides' processes taking CPU from the
// simulators on a 2-core machine; a diagnostic beside the default figure, never in its place.
const pinSimulators = flags['pin-simulators'] === true;
const THROUGHPUT = {
  tasks: wholeNumber('tasks', flags.tasks) ?? (quick ? 50 : 150),
  numRepeats: 4,
  withoutTemporal: flags['without-temporal'] === true,
};
const TARGETS = { durableOverBare: 0.95, durableOverBareAt4x: 0.9, rssRatio: 1.2, idleRssMb: 200 };
const rowsFlag = flags.rows?.split(',').map((n) => wholeNumber('rows', n)!);
const SCALE_ROWS = rowsFlag ?? (million ? [10_000, 1_000_000] : quick ? [2_000, 20_000] : [10_000, 100_000]);
const MB = 1024 * 1024;
const OVERLAP_DEFAULT_REPEATS = 8;

/**
 * The overlap bench's size. By default each stage keeps its engine working at least 60 s alone, the
 * issue's sizing; --quick is a smoke run of seconds that only checks the bench works.
 */
function overlapOptions() {
  return {
    repeats: wholeNumber('repeats', flags.repeats) ?? (quick ? 1 : OVERLAP_DEFAULT_REPEATS),
    engine: {
      latencyMs: wholeNumber('latency-ms', flags['latency-ms'], 0) ?? (quick ? 20 : 250),
      slots: wholeNumber('slots', flags.slots) ?? 8,
      seed: 7,
    },
    // A quarter of the policy's: the demo's rollouts make a little under a quarter of the calls local
    // profiling makes on their candidates, so collect takes a little less time than profiling.
    sourceSlots: wholeNumber('source-slots', flags['source-slots']) ?? 2,
    rounds: wholeNumber('rounds', flags.rounds) ?? (quick ? 1 : 2),
    keep: flags.keep === true,
  };
}
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  if (overlapBench) return runOverlapBench(overlapOptions());
  if (workerCpuProfileFlag === '') throw new Error('--worker-cpu-profile=DIR needs the directory the profiles go to');
  if (peer) {
    // Two A B B A cycles (four pairs) unless --cycles says otherwise: with two pairs a median is a mean.
    return runPeerBench({
      nemoGym,
      numRepeats: peerRepeats,
      cycles: flags.cycles === undefined ? 2 : cycles,
      // Unset: the collect stage's default, as a user who leaves chunk_size out gets it.
      chunkSize: wholeNumber('chunk-size', flags['chunk-size']),
      workerNodeOptions,
      pivotsPath: flags.pivots && path.resolve(flags.pivots),
      cpuProfileDir: workerCpuProfileDir,
      keep: flags.keep === true,
    });
  }
  if (pinSimulators) {
    const cpus = os.availableParallelism();
    if (cpus < 2) throw new Error(`--pin-simulators needs 2 CPUs or more, this process may use ${cpus}`);
    // Before anything is spawned: the dev server and the workers inherit this process's CPUs.
    execFileSync('taskset', ['-a', '-p', '-c', `1-${cpus - 1}`, String(process.pid)], { stdio: 'ignore' });
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-bench-'));
  const keep = flags.keep === true;
  const server = await ensureDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    stateDir: path.join(dir, 'state'),
  });
  const sims = await startSimulatorProcess(7, pinSimulators ? { cpu: 0 } : {});
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
    workerMaxOldSpaceMb,
    workerNodeOptions,
    workerHeapProbe,
    workerCpuProfileDir,
    chunkSize,
    chunksInFlight,
  };
  try {
    log(
      `pivot-miner bench${quick ? ' --quick' : ''}${million ? ' --million' : ''}: Temporal dev server ${server.address}, simulators (zero added latency) in their own process, ` +
        `${os.cpus().length} CPUs, load ${loadAtStart}`,
    );
    if (pinSimulators)
      log(
        '--pin-simulators: the simulators on CPU 0 alone, this process, the dev server and the workers on the others (both sides alike); a diagnostic, NOT the default figure',
      );
    log(
      `worker = \`pivot-miner worker\` child process (one fresh per figure); chunk_size ${chunkSize}, ${chunksInFlight} chunks in flight, ` +
        `max_concurrency ${CONCURRENCY} (${productChunking ? 'the product defaults' : `NOT the product defaults ${DEFAULT_CHUNK_SIZE} / ${DEFAULT_CHUNKS_IN_FLIGHT}: figures for a candidate default only`}); work dir ${dir}`,
    );
    const heapEnv =
      workerMaxOldSpaceMb === undefined
        ? process.env
        : { ...process.env, PIVOT_MINER_WORKER_HEAP_MB: String(workerMaxOldSpaceMb) };
    const workerEnv = workerProcessEnv(heapEnv);
    const mallocFromEnv = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_'].filter(
      (name) => process.env[name] !== undefined,
    );
    log(
      `worker memory: ${workerHeapArgs(heapEnv).join(' ') || "Node's default V8 heap"}, MALLOC_ARENA_MAX=${workerEnv.MALLOC_ARENA_MAX ?? "glibc's default"}, ` +
        `MALLOC_MMAP_THRESHOLD_=${workerEnv.MALLOC_MMAP_THRESHOLD_ ?? "glibc's default (dynamic)"}` +
        `${workerMaxOldSpaceMb !== undefined ? ' (--worker-max-old-space-mb, NOT the product default)' : mallocFromEnv.length > 0 ? ` (${mallocFromEnv.join(', ')} from the environment, NOT the product default)` : ' (the product default)'}`,
    );
    if (bench.workerCpuProfileDir) {
      mkdirSync(bench.workerCpuProfileDir, { recursive: true });
      log(
        `--worker-cpu-profile: workers write CPU profiles in 15 s slices to ${bench.workerCpuProfileDir}; the sampler costs them CPU, so the ratios are not the product's`,
      );
    }
    if (workerHeapProbe)
      log(
        "--worker-heap: workers force a full GC every 5 s to sample their live heap, so their RSS figures are lower than the product's",
      );

    const throughputs: ThroughputResult[] = [];
    if (only !== 'scale' && !million) {
      for (const [concurrency, target] of [
        [CONCURRENCY, TARGETS.durableOverBare],
        [4 * CONCURRENCY, TARGETS.durableOverBareAt4x],
      ] as const) {
        const tp = await measureThroughput(bench, { concurrency, cycles, ...THROUGHPUT });
        throughputs.push(tp);
        throughputLines(tp, target).forEach(log);
      }
    }
    const scale: ScaleRun[] = [];
    if (only !== 'throughput') {
      const sample = throughputs[0]?.sample;
      const candidatesSource = sample ? await candidatesFrom(sample.runDir, sample.run) : await sampleCandidates(bench);
      for (const rows of SCALE_ROWS) {
        const s = await localProfileRun(bench, candidatesSource, rows);
        scale.push(s);
        scaleLines(s, TARGETS.idleRssMb).forEach(log);
      }
    }
    const [small, large] = scale;
    const rssRatio = small && large ? large.peakRssBytes / small.peakRssBytes : undefined;
    if (small && large && rssRatio !== undefined) {
      // A worker that died has no kernel peak: its highest sample is a floor, and the ratio with it.
      const atLeast = large.failure || small.failure ? 'at least ' : '';
      log(
        `worker peak RSS during the stage, ${large.rows} rows / ${small.rows} rows (baseline) = ${round(large.peakRssBytes / MB, 1)} / ${round(small.peakRssBytes / MB, 1)} MB = ` +
          `${atLeast}${round(rssRatio, 3)} (target <= ${TARGETS.rssRatio}: ${rssRatio <= TARGETS.rssRatio && !atLeast ? 'met' : 'NOT met'}; load ${loadNow()})`,
      );
    }
    const allRuns = [...throughputs.map((t) => t.sample.run), ...scale.map((s) => s.run)].flatMap(
      (r) => r?.historyEventsPerRun ?? [],
    );
    const finished = [...scale].reverse().find((s) => s.run);
    if (finished?.run) historyLines(finished.rows, finished.run, allRuns, chunkSize).forEach(log);

    const [tp16, tp64] = throughputs;
    const rate = (t: ThroughputResult | undefined, side: 'bare' | 'durable') => (t ? round(rateOf(t[side]), 1) : null);
    const ratio = (t: ThroughputResult | undefined, of: (tp: ThroughputResult) => number = durableOverBare) =>
      t ? round(of(t), 3) : null;
    const withoutTemporal = tp16 && withoutTemporalRatios(tp16);
    console.log(
      JSON.stringify({
        mode: million ? 'million' : quick ? 'quick' : 'default',
        pinned_simulators: pinSimulators,
        chunk_size: chunkSize,
        chunks_in_flight: chunksInFlight,
        product_defaults: productChunking,
        load_start_end: [loadAtStart, loadNow()],
        worker_max_old_space_mb: workerMaxOldSpaceMb ?? null,
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
        rss_large_over_small: rssRatio === undefined ? null : round(rssRatio, 3),
        idle_rss_mb_before_after: large
          ? [round(large.idleRssBeforeBytes / MB, 1), round(large.idleRssAfterBytes / MB, 1)]
          : null,
        history_events_max_per_run: allRuns.length > 0 ? Math.max(...allRuns) : null,
        scale_failures: scale.flatMap((s) => (s.failure ? [`${s.rows}: ${s.failure}`] : [])),
        local_profile_rollouts: large?.rows ?? null,
        local_profile_rollouts_per_s: large?.run ? round(large.rows / large.run.seconds, 1) : null,
      }),
    );
    // A worker that died is printed as a figure above, and still fails the run.
    if (scale.some((s) => s.failure)) process.exitCode = 1;
  } finally {
    // The bare loop's /aggregate_metrics call and the side without Temporal (--without-temporal) ran
    // the activities' keep-alive pools in this process.
    await closePools();
    await connection.close();
    await sims.stop();
    await server.stop();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}${cause}`);
  process.exitCode = 1;
});
