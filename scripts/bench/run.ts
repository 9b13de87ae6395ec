import path from 'node:path';
import { DEFAULT_CHUNK_SIZE, DEFAULT_CHUNKS_IN_FLIGHT } from './benchContext';
import { runDefaultBench, type DefaultBenchOptions } from './defaultBench';
import { parseFlags, refuse, wholeNumber } from './flags';
import { runOverlapBench } from './overlap';
import { runPeerBench } from './peer';

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

// --pin-simulators gives the simulators CPU 0 to themselves and this process, the dev server and
// the workers the other CPUs, on both sides alike: the model server's CPU is its own, as where it runs
// on other hardware. It tells how much of durable / bare is the sides' processes taking CPU from the
// simulators on a 2-core machine; a diagnostic beside the default figure, never in its place.
const pinSimulators = flags['pin-simulators'] === true;
const rowsFlag = flags.rows?.split(',').map((n) => wholeNumber('rows', n)!);
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

async function main(): Promise<void> {
  if (overlapBench) return runOverlapBench(overlapOptions());
  if (workerCpuProfileFlag === '') throw new Error('--worker-cpu-profile=DIR needs the directory the profiles go to');
  if (peer) return runPeerBench(peerOptions());
  return runDefaultBench(defaultBenchOptions());
}

function defaultBenchOptions(): DefaultBenchOptions {
  return {
    quick,
    million,
    pinSimulators,
    workerMaxOldSpaceMb,
    workerNodeOptions,
    workerHeapProbe,
    workerCpuProfileDir,
    chunkSize,
    chunksInFlight,
    cycles,
    only,
    // Tasks per throughput round, each collected 4 times. --tasks changes the round's size to tell the
    // per-round costs (workflow tasks, activity hand-offs) from those that grow with the rollouts.
    // --without-temporal adds a third throughput side, the stage's activities with no Temporal, to
    // tell the stage's own work from what Temporal adds.
    throughput: {
      tasks: wholeNumber('tasks', flags.tasks) ?? (quick ? 50 : 150),
      numRepeats: 4,
      withoutTemporal: flags['without-temporal'] === true,
    },
    scaleRows: rowsFlag ?? (million ? [10_000, 1_000_000] : quick ? [2_000, 20_000] : [10_000, 100_000]),
    keep: flags.keep === true,
  };
}

function peerOptions(): Parameters<typeof runPeerBench>[0] {
  return {
    nemoGym,
    numRepeats: peerRepeats,
    // Two A B B A cycles (four pairs) unless --cycles says otherwise: with two pairs a median is a mean.
    cycles: flags.cycles === undefined ? 2 : cycles,
    // Unset: the collect stage's default, as a user who leaves chunk_size out gets it.
    chunkSize: wholeNumber('chunk-size', flags['chunk-size']),
    workerNodeOptions,
    pivotsPath: flags.pivots && path.resolve(flags.pivots),
    cpuProfileDir: workerCpuProfileDir,
    keep: flags.keep === true,
  };
}

main().catch((err: unknown) => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}${cause}`);
  process.exitCode = 1;
});
