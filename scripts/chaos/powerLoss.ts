import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import YAML from 'yaml';
import { pivotMiningWorkflow } from '../../workflows';
import { forgetfulFsBinary } from '../forgetfulFs/mount';
import { bounded } from '../lib/bounded';
import { checkRolloutKeys, compareRunDirs } from './compare';
import { runDiskFull } from './diskFull';
import { pointPassed, POWER_CUT_POINTS, type PowerCutPoint } from './powerCutPoints';
import { PowerHost, type PowerHostOptions } from './powerHost';
import { comparePools, POOL_DIR, runPoolPhase, writePoolInputs, type PoolPhaseResult } from './poolPhase';
import type { CutRecord, PowerLossReport } from './powerLossReport';
import { runStageOf, waitForResult } from './workflowEnd';
import { pipelineConfig, type ChaosOptions } from './scenario';
import { startRestartableTemporal } from './temporalServer';
import { WorkerPool } from './workers';

// `npm run chaos -- --power-loss`: the pipeline once undisturbed, then on a host whose artifacts root
// is a forgetful-fs mount. At each cut point the filesystem freezes at that very operation; every
// worker of the host is SIGKILLed, the power is cut (what was not fsynced is lost), the filesystem is
// remounted and the workers restarted. Temporal runs on its own disk throughout. Once the run is done
// the power is cut once more, so what is compared is what the disk kept: it must be the undisturbed
// run's artifacts, every rollout key once. Then a full disk (diskFull.ts).

export interface PowerLossOptions extends Omit<ChaosOptions, 'kills' | 'killGapMs' | 'serverRestarts'> {
  points: PowerCutPoint[];
  /** How long to wait for a point to be reached: a stage activity killed mid-way is retried only
   * after its heartbeat timeout (2 minutes). */
  pointTimeoutMs: number;
  finishTimeoutMs: number;
  diskFull: boolean;
  /** Also run a nightly run and a curriculum round after the pipeline, and cut in them (poolPhase.ts). */
  pool: boolean;
}

/** The bar: at least this many cuts, across every stage. */
export const MIN_POWER_CUTS = 20;

const common = { seed: 7, collectChunkSize: 8, localProfileChunkSize: 16, workers: 2 };

export const FULL_POWER_LOSS: PowerLossOptions = {
  ...common,
  label: 'full',
  numRepeats: 4,
  points: POWER_CUT_POINTS,
  pointTimeoutMs: 200_000,
  finishTimeoutMs: 300_000,
  diskFull: true,
  pool: true,
};

/** A few cuts in chunk activities only (their heartbeat timeout is 15 s), for `npm test`. */
export const SHORT_POWER_LOSS: PowerLossOptions = {
  ...common,
  label: 'short',
  numRepeats: 2,
  localProfileChunkSize: 32,
  points: POWER_CUT_POINTS.filter((p) => p.what === 'mid-chunk' || p.what === 'right after a chunk completed').slice(
    0,
    3,
  ),
  // A cut can kill a merge, which Temporal retries only after the stage heartbeat timeout (2 minutes).
  pointTimeoutMs: 150_000,
  finishTimeoutMs: 240_000,
  diskFull: false,
  pool: false,
};

const repoRoot = path.resolve(__dirname, '../..');
/** A trigger found frozen by disarm has already sent where it fired; the line is in flight at most. */
const FIRED_TIMEOUT_MS = 10_000;
const CONFIG = 'pipeline.yaml';

/**
 * Cuts the power at each point in turn; a point not reached in time, or one the run's stage is past
 * (`runStage`), is recorded and skipped: waiting on, the run would go on to its end meanwhile.
 */
async function cutAtPoints(
  host: PowerHost,
  job: { isOver: () => boolean; runStage: () => Promise<string | undefined> },
  opts: PowerLossOptions,
  log: (line: string) => void,
): Promise<{ cuts: CutRecord[]; missed: CutRecord[] }> {
  const { isOver } = job;
  const cuts: CutRecord[] = [];
  const missed: CutRecord[] = [];
  let missedInARow = 0;
  for (const point of opts.points) {
    const record = { stage: point.stage, what: point.what };
    // Two points in a row not reached: the run is stuck (or over), and the rest would only wait.
    if (isOver() || missedInARow >= 2) {
      missed.push(record);
      continue;
    }
    const { fired } = await host.fs.arm(point.when, point.op, point.nth, point.pattern);
    const deadline = Date.now() + opts.pointTimeoutMs;
    let at: string | undefined;
    void fired.then((where) => (at = where));
    let passed = false;
    for (let polls = 1; at === undefined && !isOver() && !passed && Date.now() < deadline; polls++) {
      await sleep(200);
      if (polls % 5 === 0) passed = pointPassed(point, await job.runStage());
    }
    // A trigger that fires just after the deadline would freeze the host for good: disarm it, and if
    // it fired meanwhile, the point was reached after all.
    if (at === undefined && (await host.fs.disarm()))
      at = await bounded(fired, FIRED_TIMEOUT_MS, `forgetful-fs reporting where ${point.what} fired`);
    if (at === undefined) {
      log(`[power-loss] not reached: ${point.stage} / ${point.what}${passed ? ' (the run is past it)' : ''}`);
      missed.push(record);
      // A point the run is past says nothing of a stuck run.
      if (!passed) missedInARow++;
      continue;
    }
    missedInARow = 0;
    await host.cut();
    cuts.push({ ...record, at });
    log(`[power-loss] cut ${cuts.length}: ${point.stage} / ${point.what} at ${at}`);
  }
  return { cuts, missed };
}

/** What the power-loss host ran: the pipeline, then (with `opts.pool`) the nightly run and curriculum round. */
interface HostJob {
  over: boolean;
  failure?: string;
  pool?: PoolPhaseResult;
  done: Promise<void>;
}

function startHostJob(handle: WorkflowHandle, client: Client, host: PowerHost, opts: PowerLossOptions): HostJob {
  const job: HostJob = { over: false, done: Promise.resolve() };
  job.done = (async () => {
    await waitForResult(handle);
    if (opts.pool)
      job.pool = await runPoolPhase(client, 'powerloss', {
        baseDir: path.dirname(host.artifactsRoot),
        artifactsRoot: host.artifactsRoot,
      });
  })()
    .catch((err: unknown) => {
      job.failure = `failed: ${err instanceof Error ? err.message : String(err)}`;
    })
    .finally(() => (job.over = true));
  return job;
}

/** Waits for the job after the last cut; one not over in time is judged unfinished and its workflows terminated. */
async function settleJob(client: Client, job: HostJob, timeoutMs: number): Promise<string> {
  const timer = new AbortController();
  await Promise.race([job.done, sleep(timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined)]);
  timer.abort();
  if (job.over) return job.failure ?? 'finished';
  for (const id of ['power-loss-powerloss', 'power-loss-powerloss-nightly', 'power-loss-powerloss-curriculum'])
    await client.workflow
      .getHandle(id)
      .terminate('judged by the power-loss harness')
      .catch(() => undefined);
  return `not finished within ${timeoutMs / 1000} s`;
}

export async function runPowerLoss(
  opts: PowerLossOptions,
  log: (line: string) => void = console.error,
): Promise<PowerLossReport> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), `pivot-miner-power-loss-${opts.label}-`));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'tasks.jsonl'));
  const pipeline = pipelineConfig({ ...opts, kills: 0, killGapMs: [0, 0], serverRestarts: 0 });
  writeFileSync(path.join(baseDir, CONFIG), YAML.stringify(pipeline));
  const binary = forgetfulFsBinary();
  const temporal = await startRestartableTemporal({
    dbFile: path.join(baseDir, 'temporal.sqlite'),
    logFile: path.join(baseDir, 'temporal.log'),
  });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const start = (name: string) =>
    client.workflow.start(pivotMiningWorkflow, {
      taskQueue: `chaos-${name}`,
      workflowId: `power-loss-${name}`,
      args: [{ config_path: CONFIG, run_id: 'chaos' }],
    });
  const hostOpts = (name: string) => ({ name, workers: opts.workers, temporalAddress: temporal.address, baseDir });
  const stops: Array<() => Promise<void>> = [];
  let cleaned: Promise<void> | undefined;
  const cleanup = () =>
    (cleaned ??= (async () => {
      for (const stop of stops.reverse())
        await stop().catch((err: unknown) => log(`[power-loss] cleanup: ${String(err)}`));
      await connection.close();
      await temporal.stop();
      if (!opts.keepDir) rmSync(baseDir, { recursive: true, force: true });
    })());
  // Interrupted, the harness still unmounts and stops what it started before it goes.
  const onSignal = (signal: NodeJS.Signals) => void cleanup().finally(() => process.kill(process.pid, signal));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    log(`[power-loss] ${opts.label}: work dir ${baseDir}, Temporal at ${temporal.address}`);
    const calm = new WorkerPool({
      ...hostOpts('undisturbed'),
      size: opts.workers,
      taskQueue: 'chaos-undisturbed',
      artifactsRoot: path.join(baseDir, 'undisturbed'),
      logFile: path.join(baseDir, 'workers-undisturbed.log'),
    });
    stops.push(() => calm.stop());
    let t0 = Date.now();
    const undisturbed = await bounded(
      (await start('undisturbed')).result(),
      opts.finishTimeoutMs,
      'the undisturbed run finishing',
    );
    let undisturbedPool: PoolPhaseResult | undefined;
    if (opts.pool) {
      writePoolInputs(baseDir, pipeline, path.join(undisturbed.runDir, 'rollouts.jsonl'));
      const pool = runPoolPhase(client, 'undisturbed', { baseDir, artifactsRoot: path.join(baseDir, 'undisturbed') });
      undisturbedPool = await bounded(
        pool,
        opts.finishTimeoutMs,
        "the undisturbed host's nightly run and curriculum round",
      );
    }
    const undisturbedSeconds = (Date.now() - t0) / 1000;
    await calm.stop();
    log(`[power-loss] undisturbed run done in ${undisturbedSeconds.toFixed(1)} s`);

    const host = await PowerHost.start(hostOpts('powerloss'), binary);
    stops.push(() => host.stop());
    t0 = Date.now();
    const run = await start('powerloss');
    const job = startHostJob(run, client, host, opts);
    const runStage = () => runStageOf(run);
    const { cuts, missed } = await cutAtPoints(host, { isOver: () => job.over, runStage }, opts, log);
    const outcome = await settleJob(client, job, opts.finishTimeoutMs);
    // What counts is what the disk kept: one more cut after the run, then compare.
    await host.cut();
    cuts.push({ stage: 'done', what: 'after the run', at: 'its end' });
    const powerLossSeconds = (Date.now() - t0) / 1000;
    const runDir = path.join(host.artifactsRoot, 'runs', 'chaos');
    const comparison = existsSync(runDir)
      ? compareRunDirs(undisturbed.runDir, runDir)
      : { identical: false, differing: ['runs/chaos (missing)'] };
    if (undisturbedPool !== undefined) {
      const pools = job.pool
        ? comparePools(undisturbedPool, job.pool)
        : { identical: false, differing: [`${POOL_DIR} (not published)`] };
      comparison.identical &&= pools.identical;
      comparison.differing.push(...pools.differing);
    }
    const keys = checkRolloutKeys(runDir, undisturbed.runDir);
    log(`[power-loss] power-loss run: ${outcome}`);

    const diskFull = opts.diskFull
      ? await diskFullPhase(hostOpts('diskfull'), binary, start, undisturbed.runDir, opts, stops, log)
      : undefined;
    return {
      label: opts.label,
      cuts,
      missed,
      finished: outcome === 'finished',
      outcome,
      identical: outcome === 'finished' && comparison.identical,
      differing: comparison.differing,
      duplicate_keys: keys.duplicateKeys,
      missing_keys: keys.missingKeys,
      unexpected_worker_exits: host.unexpectedExits,
      wall_seconds: { undisturbed: undisturbedSeconds, power_loss: powerLossSeconds, disk_full: diskFull?.seconds },
      disk_full: diskFull?.record,
      work_dir: baseDir,
    };
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await cleanup();
  }
}

/** The full-disk run on a host of its own (diskFull.ts). */
async function diskFullPhase(
  hostOptions: PowerHostOptions,
  binary: string,
  start: (name: string) => Promise<WorkflowHandle>,
  reference: string,
  opts: PowerLossOptions,
  stops: Array<() => Promise<void>>,
  log: (line: string) => void,
): Promise<Awaited<ReturnType<typeof runDiskFull>>> {
  const diskHost = await PowerHost.start(hostOptions, binary);
  stops.push(() => diskHost.stop());
  return runDiskFull({
    handle: await start('diskfull'),
    host: diskHost,
    reference,
    finishTimeoutMs: opts.finishTimeoutMs,
    log,
  });
}
