import { FAULT_KINDS } from '../../contracts/faultsConfig';

// What a chaos run is made of: its knobs (how many repeats, workers, kills, restarts), the kill
// schedule's random source, and the two pipeline configs it runs, undisturbed and with fault fronts.

export interface ChaosOptions {
  label: string;
  seed: number;
  numRepeats: number;
  collectChunkSize: number;
  localProfileChunkSize: number;
  workers: number;
  /** Worker SIGKILLs in all: up to half during collect, the rest during local profiling. */
  kills: number;
  killGapMs: [number, number];
  serverRestarts: number;
  keepDir?: boolean;
}

export const FULL: ChaosOptions = {
  label: 'full',
  seed: 7,
  numRepeats: 16,
  collectChunkSize: 8,
  localProfileChunkSize: 16,
  workers: 2,
  kills: 22,
  killGapMs: [4_000, 9_000],
  serverRestarts: 2,
};

export const SHORT: ChaosOptions = {
  label: 'short',
  seed: 7,
  numRepeats: 2,
  collectChunkSize: 8,
  localProfileChunkSize: 32,
  workers: 2,
  kills: 4,
  killGapMs: [2_000, 5_000],
  serverRestarts: 2,
};

/** mulberry32: the kill schedule is reproducible from the chaos seed (timing aside). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Why the faults below are transient enough for identical artifacts: random faults (rate, bursts)
// hit a request key at most `max_faults_per_request` = 1 time per worker process, and the sidecar
// counts attempts across processes. A key could only reach max_attempts = 6 failed attempts if its
// chunk were picked up by 6 successive worker processes while that key was still unfinished; kills
// are seconds apart and a faulted key is retried within about a second (8 s for a hang), so that
// does not happen at these sizes. The hang (60 s) outlasts request_timeout_ms (8 s), so it is a
// client timeout, as in production; slow responses (1.5 s) stay under it and must not fail.
export function faultsBlock(eventsFile: string) {
  const common = { kinds: [...FAULT_KINDS], max_faults_per_request: 1, hang_ms: 60_000, slow_ms: 1_500 };
  return {
    events_jsonl: eventsFile,
    agent: { ...common, rate: 0.08, burst_5xx: { every: 97, length: 4 }, retry_after_s: 1 },
    model: { ...common, rate: 0.03, burst_5xx: { every: 211, length: 5 } },
  };
}

export function pipelineConfig(opts: ChaosOptions, faults?: ReturnType<typeof faultsBlock>) {
  const chunking = { max_chunks_in_flight: 4, max_concurrency: 4, max_attempts: 6, request_timeout_ms: 8_000 };
  return {
    name: 'chaos',
    seed: opts.seed,
    servers: faults ? { mode: 'embedded', faults } : { mode: 'embedded' },
    collect: {
      input_jsonl: 'tasks.jsonl',
      agent_name: 'demo_tool_agent',
      num_repeats: opts.numRepeats,
      chunk_size: opts.collectChunkSize,
      ...chunking,
    },
    local_profile: { num_samples: 8, chunk_size: opts.localProfileChunkSize, ...chunking },
    publish: { dataset_name: 'chaos_pivots' },
  };
}
