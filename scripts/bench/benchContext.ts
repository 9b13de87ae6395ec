import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { pipelineConfigSchema } from '../../contracts/config';
import { EMBEDDED_AGENT_NAME } from '../../servers/embeddedStack';
import { benchPlan } from './collect';
import { waitForPoller, type SimulatorProcess } from './services';
import { startBenchWorker, type BenchWorker } from './workerProcess';

// What every measurement of a bench shares: the Temporal client and server, the simulator process,
// the work directory and the product settings the durable side runs with.

// The product defaults, read from the config schema so the bench cannot drift from them.
const productDefaults = pipelineConfigSchema.parse({
  name: 'defaults',
  collect: { input_jsonl: 'tasks.jsonl', agent_name: 'agent' },
});
export const NUM_SAMPLES = productDefaults.local_profile.num_samples;
export const CONCURRENCY = productDefaults.collect.max_concurrency;
export const DEFAULT_CHUNK_SIZE = productDefaults.collect.chunk_size;
export const DEFAULT_CHUNKS_IN_FLIGHT = productDefaults.collect.max_chunks_in_flight;

export interface Bench {
  client: Client;
  temporalAddress: string;
  /** The Temporal dev server's pid, for its CPU seconds. */
  temporalPid: number;
  sims: SimulatorProcess;
  dir: string;
  workerMaxOldSpaceMb?: number;
  workerNodeOptions?: string;
  /** Sample each worker's live heap (forced GC every few seconds); its RSS figures then are not the product's. */
  workerHeapProbe?: boolean;
  /** Where each worker writes CPU profiles (cpuProfile.cjs); the sampler's cost makes the ratios not the product's. */
  workerCpuProfileDir?: string;
  /** The product defaults unless a flag asks otherwise, for trying a candidate default. */
  chunkSize: number;
  chunksInFlight: number;
}

let workerSerial = 0;

/** The 1, 5 and 15 minute load averages, as `uptime` prints them. */
export function loadNow(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** One fresh worker process per measurement, so its peak RSS belongs to that measurement alone. */
export async function withWorker<T>(
  bench: Bench,
  body: (taskQueue: string, worker: BenchWorker) => Promise<T>,
): Promise<{ value: T; peakRssBytes: number }> {
  const taskQueue = `pivot-bench-${process.pid}-${++workerSerial}`;
  const worker = startBenchWorker({
    temporalAddress: bench.temporalAddress,
    taskQueue,
    artifactsRoot: bench.dir,
    logPath: path.join(bench.dir, `${taskQueue}.log`),
    maxOldSpaceMb: bench.workerMaxOldSpaceMb,
    nodeOptions: bench.workerNodeOptions,
    heapProbePath: bench.workerHeapProbe ? path.join(bench.dir, `${taskQueue}.heap.jsonl`) : undefined,
    cpuProfileDir: bench.workerCpuProfileDir,
  });
  try {
    await Promise.race([waitForPoller(bench.client, taskQueue), worker.exited]);
    const value = await Promise.race([body(taskQueue, worker), worker.exited]);
    return { value, peakRssBytes: worker.peakRssBytes() };
  } finally {
    await worker.stop();
  }
}

export function planFor(bench: Bench, runName: string, opts: { maxConcurrency?: number; numRepeats?: number } = {}) {
  const runDir = path.join(bench.dir, 'runs', runName);
  mkdirSync(runDir, { recursive: true });
  const plan = benchPlan({
    runDir,
    baseDir: bench.dir,
    agentUrl: bench.sims.urls.agent,
    modelUrl: bench.sims.urls.model,
    agentName: EMBEDDED_AGENT_NAME,
    numRepeats: opts.numRepeats ?? 1,
    numSamples: NUM_SAMPLES,
    chunkSize: bench.chunkSize,
    maxChunksInFlight: bench.chunksInFlight,
    maxConcurrency: opts.maxConcurrency ?? CONCURRENCY,
  });
  return { runDir, plan };
}
