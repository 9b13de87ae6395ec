import { pivotMiningWorkflow } from '../../workflows';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { pivotMiningProgressQuery } from '../../contracts/temporal';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import YAML from 'yaml';
import { FAULT_KINDS } from '../../contracts/faultsConfig';
import type { PivotMiningResult } from '../../contracts/payloads';
import { checkFailuresSidecar, checkRolloutKeys, compareRunDirs, readFaultEvents } from './compare';
import { startRestartableTemporal } from './temporalServer';
import { WorkerPool } from './workers';

// `npm run chaos`: the full pipeline on the simulators twice with one seed, once undisturbed and once
// while worker processes are SIGKILLed at random points, the Temporal dev server is restarted on its
// SQLite file, and fault fronts fail requests to the agent and model. Both runs must publish the
// same artifacts. The last stdout line is a JSON summary for CI.

const repoRoot = path.resolve(__dirname, '../..');

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
function rng(seed: number): () => number {
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
function faultsBlock(eventsFile: string) {
  const common = { kinds: [...FAULT_KINDS], max_faults_per_request: 1, hang_ms: 60_000, slow_ms: 1_500 };
  return {
    events_jsonl: eventsFile,
    agent: { ...common, rate: 0.08, burst_5xx: { every: 97, length: 4 }, retry_after_s: 1 },
    model: { ...common, rate: 0.03, burst_5xx: { every: 211, length: 5 } },
  };
}

function pipelineConfig(opts: ChaosOptions, faults?: ReturnType<typeof faultsBlock>) {
  const chunking = { max_chunks_in_flight: 4, max_concurrency: 4, max_attempts: 6, request_timeout_ms: 8_000 };
  return {
    name: 'chaos',
    seed: opts.seed,
    servers: faults ? { mode: 'embedded', faults } : { mode: 'embedded' },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: opts.numRepeats, chunk_size: opts.collectChunkSize, ...chunking },
    local_profile: { num_samples: 8, chunk_size: opts.localProfileChunkSize, ...chunking },
    publish: { dataset_name: 'chaos_pivots' },
  };
}

async function stageOf(handle: WorkflowHandle): Promise<string | undefined> {
  try {
    return (await handle.query(pivotMiningProgressQuery)).stage;
  } catch {
    return undefined;
  }
}

/** Waits for the workflow to close, riding out server restarts (calls fail while it is down). */
async function waitForResult(handle: WorkflowHandle): Promise<PivotMiningResult> {
  for (;;) {
    try {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') return (await handle.result()) as PivotMiningResult;
    } catch (err) {
      if ((err as Error).name === 'WorkflowFailedError') throw err;
    }
    await sleep(1_000);
  }
}

async function chunkActivityRetries(client: Client, workflowId: string): Promise<number> {
  let retries = 0;
  for (const stage of ['collect', 'local_profile']) {
    const history = await client.workflow.getHandle(`${workflowId}/${stage}`).fetchHistory();
    for (const e of history.events ?? []) if ((e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1) retries++;
  }
  return retries;
}

export interface ChaosReport {
  label: string;
  worker_kills: number;
  kills_by_stage: Record<string, number>;
  server_restarts: number;
  identical: boolean;
  differing: string[];
  files_compared: number;
  duplicate_keys: number;
  missing_keys: number;
  faults_injected: Record<string, Record<string, number>>;
  failure_lines: number;
  failure_lines_by_class: Record<string, number>;
  unexplained_failure_lines: number;
  faults_lost_with_killed_workers: number;
  exhausted_keys: number;
  chunk_activity_retries: number;
  unexpected_worker_exits: number;
  wall_seconds: { undisturbed: number; chaos: number };
  rollouts: number;
  local_profile_rollouts: number;
  published: number;
  work_dir: string;
}

export async function runChaos(opts: ChaosOptions, log: (line: string) => void = console.error): Promise<ChaosReport> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), `pivot-miner-chaos-${opts.label}-`));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'tasks.jsonl'));
  writeFileSync(path.join(baseDir, 'undisturbed.yaml'), YAML.stringify(pipelineConfig(opts)));
  writeFileSync(path.join(baseDir, 'chaos.yaml'), YAML.stringify(pipelineConfig(opts, faultsBlock('fault_events.jsonl'))));
  const random = rng(opts.seed);
  const temporal = await startRestartableTemporal({ dbFile: path.join(baseDir, 'temporal.sqlite'), logFile: path.join(baseDir, 'temporal.log') });
  const pools: WorkerPool[] = [];
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const pool = (name: string) => {
    const p = new WorkerPool({
      size: opts.workers,
      temporalAddress: temporal.address,
      taskQueue: `chaos-${name}`,
      artifactsRoot: path.join(baseDir, name),
      baseDir,
      logFile: path.join(baseDir, `workers-${name}.log`),
    });
    pools.push(p);
    return p;
  };
  const start = (name: string) =>
    client.workflow.start(pivotMiningWorkflow, { taskQueue: `chaos-${name}`, workflowId: `chaos-${name}`, args: [{ config_path: `${name}.yaml`, run_id: 'chaos' }] });
  try {
    log(`[chaos] ${opts.label}: work dir ${baseDir}, Temporal at ${temporal.address}`);
    const calmWorkers = pool('undisturbed');
    let t0 = Date.now();
    const undisturbed = await (await start('undisturbed')).result();
    const undisturbedSeconds = (Date.now() - t0) / 1000;
    await calmWorkers.stop();
    log(`[chaos] undisturbed run done in ${undisturbedSeconds.toFixed(1)} s`);

    const workers = pool('chaos');
    t0 = Date.now();
    const handle = await start('chaos');
    const killsByStage: Record<string, number> = { collect: 0, local_profile: 0 };
    const totalKills = () => killsByStage.collect! + killsByStage.local_profile!;
    const restartAt = Array.from({ length: opts.serverRestarts }, (_, i) => Math.max(1, Math.floor(((i + 1) * opts.kills) / (opts.serverRestarts + 1))));
    const killCap = (stage: 'collect' | 'local_profile') => (stage === 'collect' ? Math.ceil(opts.kills / 2) : opts.kills - killsByStage.collect!);
    const resultPromise = waitForResult(handle);
    let finished = false;
    void resultPromise.finally(() => (finished = true)).catch(() => undefined);
    // After a kill the driver waits a random gap; otherwise it polls often, so a short stage still
    // gets its kills.
    let gapMs = 500;
    while (!finished) {
      await Promise.race([sleep(gapMs), resultPromise.catch(() => undefined)]);
      if (finished) break;
      const [lo, hi] = opts.killGapMs;
      gapMs = 500;
      const stage = await stageOf(handle);
      if ((stage === 'collect' || stage === 'local_profile') && killsByStage[stage]! < killCap(stage)) {
        const slot = Math.floor(random() * workers.size);
        await workers.kill(slot);
        killsByStage[stage]!++;
        gapMs = lo + random() * (hi - lo);
        log(`[chaos] SIGKILL worker ${slot} during ${stage} (${totalKills()} kills)`);
      }
      if (temporal.restarts < restartAt.length && totalKills() >= restartAt[temporal.restarts]!) {
        log('[chaos] restarting the Temporal dev server (same SQLite file)');
        await temporal.restart();
      }
    }
    // A run too short to reach every restart still gets them, after the fact, before it is judged.
    while (temporal.restarts < opts.serverRestarts) await temporal.restart();
    const chaos = await resultPromise;
    const chaosSeconds = (Date.now() - t0) / 1000;
    log(`[chaos] chaos run done in ${chaosSeconds.toFixed(1)} s`);

    const events = readFaultEvents(path.join(baseDir, 'fault_events.jsonl'));
    const injected: Record<string, Record<string, number>> = {};
    for (const e of events) {
      injected[e.server] ??= {};
      injected[e.server]![e.kind] = (injected[e.server]![e.kind] ?? 0) + 1;
    }
    const comparison = compareRunDirs(undisturbed.runDir, chaos.runDir);
    const keys = checkRolloutKeys(chaos.runDir);
    const sidecar = checkFailuresSidecar(chaos.runDir, events);
    return {
      label: opts.label,
      worker_kills: totalKills(),
      kills_by_stage: killsByStage,
      server_restarts: temporal.restarts,
      identical: comparison.identical,
      differing: comparison.differing,
      files_compared: comparison.filesCompared,
      duplicate_keys: keys.duplicateKeys,
      missing_keys: keys.missingKeys,
      faults_injected: injected,
      failure_lines: sidecar.failureLines,
      failure_lines_by_class: sidecar.failureLinesByClass,
      unexplained_failure_lines: sidecar.unexplainedLines,
      faults_lost_with_killed_workers: sidecar.faultsLostWithWorker,
      exhausted_keys: sidecar.exhaustedKeys,
      chunk_activity_retries: await chunkActivityRetries(client, handle.workflowId),
      unexpected_worker_exits: pools.reduce((n, p) => n + p.unexpectedExits, 0),
      wall_seconds: { undisturbed: undisturbedSeconds, chaos: chaosSeconds },
      rollouts: chaos.counts.rollouts ?? 0,
      local_profile_rollouts: chaos.counts.local_profile_rollouts ?? 0,
      published: chaos.counts.published ?? 0,
      work_dir: baseDir,
    };
  } finally {
    for (const p of pools) await p.stop();
    await connection.close();
    await temporal.stop();
    if (!opts.keepDir) rmSync(baseDir, { recursive: true, force: true });
  }
}

export function formatReport(r: ChaosReport): string {
  const rows: Array<[string, string]> = [];
  for (const server of Object.keys(r.faults_injected).sort()) {
    for (const kind of FAULT_KINDS) rows.push([`faults injected: ${server} ${kind}`, String(r.faults_injected[server]![kind] ?? 0)]);
  }
  for (const [cls, n] of Object.entries(r.failure_lines_by_class).sort()) rows.push([`request retries (failure lines): ${cls}`, String(n)]);
  rows.push(
    ['request retries (failure lines): total', String(r.failure_lines)],
    ['failure lines without an injected fault', String(r.unexplained_failure_lines)],
    ['injected faults lost with a killed worker', String(r.faults_lost_with_killed_workers)],
    ['keys out of attempts', String(r.exhausted_keys)],
    ['chunk activity retries (Temporal)', String(r.chunk_activity_retries)],
    ['worker SIGKILLs (collect / local_profile)', `${r.worker_kills} (${r.kills_by_stage.collect} / ${r.kills_by_stage.local_profile})`],
    ['workers that exited on their own', String(r.unexpected_worker_exits)],
    ['Temporal server restarts', String(r.server_restarts)],
    ['rollouts / local-profile rollouts / published pivots', `${r.rollouts} / ${r.local_profile_rollouts} / ${r.published}`],
    ['wall time undisturbed → chaos (s)', `${r.wall_seconds.undisturbed.toFixed(1)} → ${r.wall_seconds.chaos.toFixed(1)}`],
    ['artifacts identical to undisturbed (files)', `${r.identical} (${r.files_compared})${r.differing.length ? `: ${r.differing.join(', ')}` : ''}`],
    ['duplicate / missing rollout keys', `${r.duplicate_keys} / ${r.missing_keys}`],
  );
  const width = Math.max(...rows.map(([k]) => k.length));
  const summary = {
    label: r.label,
    worker_kills: r.worker_kills,
    server_restarts: r.server_restarts,
    identical: r.identical,
    duplicate_keys: r.duplicate_keys,
    missing_keys: r.missing_keys,
    faults_injected: Object.values(r.faults_injected).reduce((n, kinds) => n + Object.values(kinds).reduce((a, b) => a + b, 0), 0),
    failure_lines: r.failure_lines,
    unexplained_failure_lines: r.unexplained_failure_lines,
    exhausted_keys: r.exhausted_keys,
    wall_seconds: r.wall_seconds,
  };
  return [`chaos run (${r.label})`, ...rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`), JSON.stringify(summary)].join('\n');
}

/** True when the run proved what it must: same artifacts, exact keys, a sidecar we can explain. */
export function chaosPassed(r: ChaosReport): boolean {
  return r.identical && r.duplicate_keys === 0 && r.missing_keys === 0 && r.unexplained_failure_lines === 0 && r.exhausted_keys === 0;
}

if (require.main === module) {
  const opts = process.argv.includes('--short') ? SHORT : FULL;
  runChaos({ ...opts, keepDir: process.argv.includes('--keep') })
    .then((report) => {
      console.log(formatReport(report));
      if (!chaosPassed(report)) process.exitCode = 1;
    })
    .catch((err: unknown) => {
      console.error(`chaos run failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    });
}
