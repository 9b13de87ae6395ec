import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import YAML from 'yaml';
import type { PivotMiningResult } from '../../contracts/payloads';
import { checkRolloutKeys, compareRunDirs, listFiles } from '../chaos/compare';
import { waitForResult } from '../chaos/run';
import type { Cluster } from './cluster';

// Fault scenarios on a fleet, each judged against an undisturbed run of the same seed on the same
// fleet: the artifacts (compared as the chaos harness compares them), the (task, rollout) keys, every
// file of the run directory left alone after the workflow completed, and the retried lines.

const repoRoot = path.resolve(__dirname, '../..');

export type FaultKind =
  /** A worker host cut off longer than the chunk heartbeat timeout, healed before the run ends. */
  | 'partition_worker'
  /** The same, healed only after the run has ended. */
  | 'partition_worker_until_end'
  /** Every process of a worker host SIGKILLed, its /tmp dropped; a fresh host joins. */
  | 'lose_worker'
  /** One engine replica cut off (its calls move to the other) and the gym host cut off briefly. */
  | 'partition_engine_and_gym'
  /** One engine replica's host lost for good. */
  | 'lose_engine'
  /** The Temporal host's server stopped and started on its SQLite file. */
  | 'restart_temporal';

/** merge: a stage's merges during its chunks; finish: the stage's last step (merge, profile, publish of its files). */
export type FaultStage = 'collect' | 'local_profile' | 'merge' | 'finish';

export interface Fault {
  kind: FaultKind;
  stage: FaultStage;
}

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

export interface ScenarioResult {
  name: string;
  faults: string[];
  /** Whether each fault hit the step it aimed at (a short step can end before the driver sees it). */
  hit: boolean[];
  identical: boolean;
  differing: string[];
  duplicate_keys: number;
  missing_keys: number;
  writes_after_completion: number;
  changed_after_completion: string[];
  retried_lines: Record<string, number>;
  unexplained_retried_lines: number;
  /** Activity attempts after the first, by stage and type, from the histories: where a fault made Temporal retry. */
  retried_activities: Record<string, number>;
  seconds: number;
}

/** The config the issue reproduced with, on the fleet's servers: demo tasks, 8 repeats, chunks of 32, 2 in flight per server. */
export function fleetConfig(cluster: Cluster, s: RunSettings): Record<string, unknown> {
  const chunking = { chunk_size: s.chunkSize, max_chunks_in_flight: 4, max_concurrency: s.maxConcurrency, max_attempts: 6, request_timeout_ms: 20_000 };
  return {
    name: 'fleet',
    seed: s.seed,
    servers: { mode: 'attach', head_url: cluster.headUrl },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: s.numRepeats, ...chunking },
    // Local profiling calls the replicas itself (the replica list); collect reaches them through the gym's model server.
    local_profile: { num_samples: 8, model: { url: cluster.engineUrls, max_concurrency: s.maxConcurrency }, ...chunking },
    publish: { dataset_name: 'fleet_pivots' },
  };
}

export function writeFleetInputs(cluster: Cluster, s: RunSettings): string {
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(cluster.sharedDir, 'tasks.jsonl'));
  writeFileSync(path.join(cluster.sharedDir, 'fleet.yaml'), YAML.stringify(fleetConfig(cluster, s)));
  return 'fleet.yaml';
}

/** Size and mtime of every file: what "nothing changed" is checked against. */
export function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const rel of listFiles(dir)) {
    const st = statSync(path.join(dir, rel));
    files.set(rel, `${st.size}:${st.mtimeMs}`);
  }
  return files;
}

export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed = [...after].filter(([rel, v]) => before.get(rel) !== v).map(([rel]) => rel);
  return [...changed, ...[...before.keys()].filter((rel) => !after.has(rel)).map((rel) => `${rel} (removed)`)];
}

/**
 * Lines some attempt wrote and a later one superseded or retried: the failures sidecars (one line
 * per failed request attempt, with its class) and any fencing sidecar the chunk and merge steps
 * keep. A fault-free reference has none, so every line here comes from a fault; a line is explained
 * when its class is one a cut-off or killed host produces.
 */
export function retriedLines(runDir: string): { byFile: Record<string, number>; unexplained: number } {
  const byFile: Record<string, number> = {};
  let unexplained = 0;
  const explained = new Set(['timeout', 'connection', 'http_5xx']);
  for (const rel of listFiles(runDir)) {
    const base = path.basename(rel);
    const isFailures = base.endsWith('_failures.jsonl') && !rel.includes('_shards/');
    const isFence = /fenc|supersed|retried/i.test(base);
    if (!isFailures && !isFence) continue;
    const lines = readFileSync(path.join(runDir, rel), 'utf8').split('\n').filter((l) => l.trim() !== '');
    byFile[rel] = lines.length;
    if (isFailures) {
      for (const line of lines) {
        const cls = (JSON.parse(line) as { failure_class?: string }).failure_class ?? '';
        if (!explained.has(cls)) unexplained++;
      }
    }
  }
  return { byFile, unexplained };
}

const MERGE_ACTIVITIES = new Set(['mergeChunks', 'mergeShards']);
const FINISH_ACTIVITIES = new Set(['finishStage', 'finishMerge', 'aggregateMetricsStage', 'profileStage']);
// Whether a fault hit the step it aimed at is told by retried_activities afterwards (an attempt
// after the first of that type): a step seen running can still end before the fault lands.

interface Target {
  worker?: string;
}

/**
 * Waits until the step a fault aims at is running, and says which worker host runs it: a chunk
 * that has been running a couple of seconds (so the partition lands mid-chunk), or one of the
 * stage's merge/finish activities. Gives up when the step is over (`hit` false) so a run never hangs.
 */
async function waitForStep(client: Client, workflowId: string, fault: Fault, done: () => boolean): Promise<{ hit: boolean; target: Target }> {
  // Merges and the finish aimed at are local profiling's: with some 2,000 rows they run long enough
  // (tens to hundreds of ms) for a fault to land while they run; collect's 160 rows pass in a blink.
  const aimsAtStep = fault.stage === 'merge' || fault.stage === 'finish';
  const stage = aimsAtStep ? 'local_profile' : fault.stage;
  const types = fault.stage === 'merge' ? MERGE_ACTIVITIES : FINISH_ACTIVITIES;
  const child = client.workflow.getHandle(`${workflowId}/${stage}`);
  let chunkSeenAt: number | undefined;
  let stageSeen = false;
  while (!done()) {
    try {
      const d = await child.describe();
      stageSeen = true;
      if (d.status.name !== 'RUNNING') return { hit: false, target: {} };
      for (const a of d.raw.pendingActivities ?? []) {
        const type = a.activityType?.name ?? '';
        const started = a.state === 2; // PENDING_ACTIVITY_STATE_STARTED
        const worker = a.lastWorkerIdentity ?? undefined;
        if (!started) continue;
        if (aimsAtStep ? types.has(type) : type === 'runChunk') {
          if (!aimsAtStep) {
            chunkSeenAt ??= Date.now();
            if (Date.now() - chunkSeenAt < 2_000) continue;
          }
          return { hit: true, target: { worker: worker ?? undefined } };
        }
      }
    } catch {
      if (stageSeen) return { hit: false, target: {} };
    }
    await sleep(aimsAtStep ? 20 : 250);
  }
  return { hit: false, target: {} };
}

/** Attempts > 1 of each activity type in the stage workflows' histories (their first runs). */
async function retriedActivities(client: Client, workflowId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const stage of ['collect', 'local_profile']) {
    const history = await client.workflow.getHandle(`${workflowId}/${stage}`).fetchHistory();
    const typeOf = new Map<string, string>();
    for (const e of history.events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled) typeOf.set(String(e.eventId), scheduled.activityType?.name ?? '?');
      const started = e.activityTaskStartedEventAttributes;
      if (started && (started.attempt ?? 1) > 1) {
        const key = `${stage}/${typeOf.get(String(started.scheduledEventId)) ?? '?'}`;
        out[key] = (out[key] ?? 0) + 1;
      }
    }
  }
  return out;
}

export interface Reference {
  result: PivotMiningResult;
  seconds: number;
}

let runCounter = 0;

/** Each run under an artifacts root of its own, with one run id for all, as the chaos harness does. */
function useArtifactsRoot(cluster: Cluster, name: string): void {
  cluster.artifactsRoot = path.join(cluster.sharedDir, 'artifacts', name);
  mkdirSync(cluster.artifactsRoot, { recursive: true });
}

async function startRun(cluster: Cluster, name: string, configPath: string): Promise<{ client: Client; connection: Connection; handle: WorkflowHandle; workflowId: string }> {
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const client = new Client({ connection });
  const workflowId = `fleet-${name}-${process.pid}-${++runCounter}`;
  const handle = await client.workflow.start('pivotMiningWorkflow', {
    taskQueue: cluster.opts.taskQueue,
    workflowId,
    args: [{ config_path: configPath, run_id: 'fleet' }],
  });
  return { client, connection, handle, workflowId };
}

/** The undisturbed run every scenario is compared with. */
export async function runReference(cluster: Cluster, s: RunSettings, configPath: string, log: (l: string) => void): Promise<Reference> {
  useArtifactsRoot(cluster, 'reference');
  while (cluster.workers.length < s.workers) cluster.addWorker();
  const t0 = Date.now();
  const { connection, handle } = await startRun(cluster, 'reference', configPath);
  try {
    const result = await waitForResult(handle);
    const seconds = (Date.now() - t0) / 1000;
    log(`[fleet] reference run: ${result.counts.rollouts} rollouts, ${result.counts.local_profile_rollouts} local-profile rollouts, ${result.counts.published} pivots in ${seconds.toFixed(1)} s`);
    return { result, seconds };
  } finally {
    await connection.close();
    await cluster.stopWorkers();
  }
}

async function applyFault(cluster: Cluster, fault: Fault, target: Target, s: RunSettings, log: (l: string) => void, state: { healAtEnd: string[]; background: Promise<unknown>[] }): Promise<void> {
  const worker = target.worker && cluster.workers.includes(target.worker) ? target.worker : cluster.workers[0]!;
  switch (fault.kind) {
    case 'partition_worker': {
      cluster.net.partition(worker);
      log(`[fleet]   ${fault.stage}: partitioned ${worker} for ${s.partitionSeconds} s`);
      state.background.push(
        sleep(s.partitionSeconds * 1000).then(() => {
          if (cluster.net.hosts.has(worker)) cluster.net.heal(worker);
          log(`[fleet]   healed ${worker}`);
        }),
      );
      return;
    }
    case 'partition_worker_until_end':
      cluster.net.partition(worker);
      state.healAtEnd.push(worker);
      log(`[fleet]   ${fault.stage}: partitioned ${worker} until the run ends`);
      return;
    case 'lose_worker': {
      await cluster.loseWorker(worker);
      const fresh = cluster.addWorker();
      log(`[fleet]   ${fault.stage}: lost ${worker} (SIGKILL, /tmp dropped); ${fresh} joined`);
      return;
    }
    case 'partition_engine_and_gym': {
      const engine = cluster.engines[0]!;
      cluster.net.partition(engine);
      cluster.net.partition('gym');
      log(`[fleet]   ${fault.stage}: partitioned ${engine} for 20 s and gym for 4 s`);
      state.background.push(
        sleep(4_000).then(() => cluster.net.heal('gym')),
        sleep(20_000).then(() => cluster.net.heal(engine)),
      );
      return;
    }
    case 'lose_engine': {
      const engine = cluster.engines[0]!;
      await cluster.loseEngine(engine);
      log(`[fleet]   ${fault.stage}: lost ${engine}`);
      return;
    }
    case 'restart_temporal':
      log(`[fleet]   ${fault.stage}: restarting the Temporal host's server`);
      await cluster.restartTemporal();
      return;
  }
}

/** One disturbed run: faults applied in order as their steps come up, then judged against the reference. */
export async function runScenario(cluster: Cluster, name: string, faults: Fault[], reference: Reference, s: RunSettings, configPath: string, log: (l: string) => void): Promise<ScenarioResult> {
  useArtifactsRoot(cluster, name);
  while (cluster.workers.length < s.workers) cluster.addWorker();
  const t0 = Date.now();
  const { client, connection, handle, workflowId } = await startRun(cluster, name, configPath);
  const state = { healAtEnd: [] as string[], background: [] as Promise<unknown>[] };
  const hit: boolean[] = [];
  let finished = false;
  const resultPromise = waitForResult(handle);
  void resultPromise.finally(() => (finished = true)).catch(() => undefined);
  try {
    log(`[fleet] scenario ${name}`);
    for (const fault of faults) {
      const step = await waitForStep(client, workflowId, fault, () => finished);
      hit.push(step.hit);
      if (!finished) await applyFault(cluster, fault, step.target, s, log, state);
    }
    const result = await resultPromise;
    const seconds = (Date.now() - t0) / 1000;
    // Recorded the moment the workflow completed, before any partitioned host is healed.
    const atCompletion = snapshot(result.runDir);
    for (const w of state.healAtEnd) if (cluster.net.hosts.has(w)) cluster.net.heal(w);
    if (state.healAtEnd.length) log(`[fleet]   healed ${state.healAtEnd.join(', ')} after the run ended`);
    await Promise.all(state.background);
    await sleep(s.watchSeconds * 1000);
    const changed = changedFiles(atCompletion, snapshot(result.runDir));
    const comparison = compareRunDirs(reference.result.runDir, result.runDir);
    const keys = checkRolloutKeys(result.runDir);
    const retried = retriedLines(result.runDir);
    return {
      name,
      faults: faults.map((f) => `${f.kind}@${f.stage}`),
      hit,
      identical: comparison.identical,
      differing: comparison.differing,
      duplicate_keys: keys.duplicateKeys,
      missing_keys: keys.missingKeys,
      writes_after_completion: changed.length,
      changed_after_completion: changed,
      retried_lines: retried.byFile,
      unexplained_retried_lines: retried.unexplained,
      retried_activities: await retriedActivities(client, workflowId),
      seconds,
    };
  } finally {
    for (const w of state.healAtEnd) if (cluster.net.hosts.has(w)) cluster.net.heal(w);
    await connection.close();
    await cluster.stopWorkers();
    await cluster.restoreEngines();
  }
}

export function scenarioPassed(r: ScenarioResult): boolean {
  return r.identical && r.duplicate_keys === 0 && r.missing_keys === 0 && r.writes_after_completion === 0 && r.unexplained_retried_lines === 0;
}

