import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Cluster } from './cluster';

// What a fleet run runs: the settings the fault matrix and the short test pick, and the pipeline
// config and tasks they make of them in the fleet's shared directory.

const repoRoot = path.resolve(__dirname, '../..');

export interface RunSettings {
  seed: number;
  numRepeats: number;
  chunkSize: number;
  maxConcurrency: number;
  workers: number;
  /** Seconds the run directory is watched after the workflow completed. */
  watchSeconds: number;
  /** How long a worker partition lasts when healed before the end: beyond the 15 s chunk heartbeat timeout. */
  partitionSeconds: number;
}

/** The config the issue reproduced with, on the fleet's servers: demo tasks, 8 repeats, chunks of 32, 2 in flight per server. */
export function fleetConfig(cluster: Cluster, s: RunSettings): Record<string, unknown> {
  const chunking = {
    chunk_size: s.chunkSize,
    max_chunks_in_flight: 4,
    max_concurrency: s.maxConcurrency,
    max_attempts: 6,
    request_timeout_ms: 20_000,
  };
  return {
    name: 'fleet',
    seed: s.seed,
    servers: { mode: 'attach', head_url: cluster.headUrl },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: s.numRepeats, ...chunking },
    // Local profiling calls the replicas itself (the replica list); collect reaches them through the gym's model server.
    local_profile: {
      num_samples: 8,
      model: { url: cluster.engineUrls, max_concurrency: s.maxConcurrency },
      ...chunking,
    },
    publish: { dataset_name: 'fleet_pivots' },
  };
}

export function writeFleetInputs(cluster: Cluster, s: RunSettings): string {
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(cluster.sharedDir, 'tasks.jsonl'));
  writeFileSync(path.join(cluster.sharedDir, 'fleet.yaml'), YAML.stringify(fleetConfig(cluster, s)));
  return 'fleet.yaml';
}
