import { readFileSync, writeFileSync } from 'node:fs';
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
  /**
   * Characters added to every task's system prompt, so every local-profile row carries them: early
   * profiling's filing passes, which walk those rows one by one, then run for seconds instead of a
   * tenth of one, and a fault can land inside one. The engines' cost does not grow with them.
   */
  promptPaddingChars?: number;
}

/** The tasks file of these settings, in the fleet's shared directory. */
function tasksFile(s: RunSettings): string {
  return s.promptPaddingChars ? `tasks-padded-${s.promptPaddingChars}.jsonl` : 'tasks.jsonl';
}

/** The demo tasks, each system prompt followed by `chars` characters of reference text. */
function paddedTasks(chars: number): string {
  const text = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8');
  if (!chars) return text;
  const note = ' Reference: distances are great-circle, prices include tax, and times are local.';
  const padding = note.repeat(Math.ceil(chars / note.length)).slice(0, chars);
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines
    .map((line) => {
      const task = JSON.parse(line) as { responses_create_params: { input: Array<{ role: string; content: string }> } };
      const system = task.responses_create_params.input.find((m) => m.role === 'system');
      if (!system) throw new Error('configs/demo_tasks.jsonl: a task without a system prompt to pad');
      system.content += padding;
      return `${JSON.stringify(task)}\n`;
    })
    .join('');
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
    collect: { input_jsonl: tasksFile(s), agent_name: 'demo_tool_agent', num_repeats: s.numRepeats, ...chunking },
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
  writeFileSync(path.join(cluster.sharedDir, tasksFile(s)), paddedTasks(s.promptPaddingChars ?? 0));
  const config = tasksFile(s)
    .replace(/^tasks/, 'fleet')
    .replace(/\.jsonl$/, '.yaml');
  writeFileSync(path.join(cluster.sharedDir, config), YAML.stringify(fleetConfig(cluster, s)));
  return config;
}
