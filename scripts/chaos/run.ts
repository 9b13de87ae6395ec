import { pivotMiningWorkflow } from '../../workflows';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { pivotMiningProgressQuery } from '../../contracts/temporal';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import YAML from 'yaml';
import { checkFailuresSidecar, checkRolloutKeys, compareRunDirs, readFaultEvents } from './compare';
import { chaosPassed, formatReport, type ChaosReport } from './report';
import { FULL_POWER_LOSS, MIN_POWER_CUTS, runPowerLoss, SHORT_POWER_LOSS } from './powerLoss';
import { formatPowerLossReport, powerLossPassed } from './powerLossReport';
import { faultsBlock, FULL, pipelineConfig, rng, SHORT, type ChaosOptions } from './scenario';
import { startRestartableTemporal } from './temporalServer';
import { WorkerPool } from './workers';
import { waitForResult } from './workflowEnd';

// `npm run chaos`: the full pipeline on the simulators twice with one seed, once undisturbed and once
// while worker processes are SIGKILLed at random points, the Temporal dev server is restarted on its
// SQLite file, and fault fronts fail requests to the agent and model. Both runs must publish the
// same artifacts. The last stdout line is a JSON summary for CI. `--power-loss` runs powerLoss.ts
// instead: power cuts and a full disk on a forgetful filesystem (`--stages=a,b`: only those stages' cuts).

const repoRoot = path.resolve(__dirname, '../..');

async function stageOf(handle: WorkflowHandle): Promise<string | undefined> {
  try {
    return (await handle.query(pivotMiningProgressQuery)).stage;
  } catch {
    return undefined;
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

export async function runChaos(opts: ChaosOptions, log: (line: string) => void = console.error): Promise<ChaosReport> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), `pivot-miner-chaos-${opts.label}-`));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'tasks.jsonl'));
  writeFileSync(path.join(baseDir, 'undisturbed.yaml'), YAML.stringify(pipelineConfig(opts)));
  writeFileSync(
    path.join(baseDir, 'chaos.yaml'),
    YAML.stringify(pipelineConfig(opts, faultsBlock('fault_events.jsonl'))),
  );
  const random = rng(opts.seed);
  const temporal = await startRestartableTemporal({
    dbFile: path.join(baseDir, 'temporal.sqlite'),
    logFile: path.join(baseDir, 'temporal.log'),
  });
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
    client.workflow.start(pivotMiningWorkflow, {
      taskQueue: `chaos-${name}`,
      workflowId: `chaos-${name}`,
      args: [{ config_path: `${name}.yaml`, run_id: 'chaos' }],
    });
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
    const restartAt = Array.from({ length: opts.serverRestarts }, (_, i) =>
      Math.max(1, Math.floor(((i + 1) * opts.kills) / (opts.serverRestarts + 1))),
    );
    const killCap = (stage: 'collect' | 'local_profile') =>
      stage === 'collect' ? Math.ceil(opts.kills / 2) : opts.kills - killsByStage.collect!;
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

async function main(): Promise<void> {
  const keepDir = process.argv.includes('--keep');
  const short = process.argv.includes('--short');
  if (process.argv.includes('--power-loss')) {
    const opts = short ? SHORT_POWER_LOSS : FULL_POWER_LOSS;
    // --stages=nightly,curriculum: only the cut points of those stages (the full bar of cuts then no longer applies).
    const stages = process.argv
      .find((a) => a.startsWith('--stages='))
      ?.slice('--stages='.length)
      .split(',');
    const points = stages ? opts.points.filter((p) => stages.includes(p.stage)) : opts.points;
    if (points.length === 0) throw new Error(`--stages=${stages!.join(',')}: no cut point is in those stages`);
    const report = await runPowerLoss({ ...opts, points, keepDir, diskFull: opts.diskFull && !stages });
    console.log(formatPowerLossReport(report));
    if (!powerLossPassed(report, short || stages ? 1 : MIN_POWER_CUTS)) process.exitCode = 1;
    return;
  }
  const report = await runChaos({ ...(short ? SHORT : FULL), keepDir });
  console.log(formatReport(report));
  if (!chaosPassed(report)) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`chaos run failed: ${err instanceof Error ? err.message : String(err)}`);
    // Everything the run started is stopped by now, but a poll of its workflow may still be waiting
    // on the server it stopped, and would keep the process alive.
    process.exit(1);
  });
}
