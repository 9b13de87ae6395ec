import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { repoRoot } from '../../bin/built';
import { pipelineConfigSchema } from '../../contracts/config';
import type { PivotMiningResult, RunPlan } from '../../contracts/payloads';
import { ensureDevServer } from '../lib/devServer';
import { ensureNemoGym, ngRunHeadPort, startNgRun, type NemoGymInstall } from '../lib/nemoGym';
import { freePort } from '../lib/net';
import { loadNow } from './benchContext';
import { runDurableStage } from './collect';
import { childPidsMatching, cpuSeconds, startCpuTrace } from './cpu';
import { groupCpu, minus, processTree, serverGroups, threadCpu } from './peerCpu';
import { perfAvailable, perfLines, startPerf } from './peerPerf';
import { profileLines, summarizeProfileDir } from './peerProfile';
import { compareRewards, peerJsonLine, roundLine, rewardsByKey, summarize, summaryLines, type PeerRound } from './peerReport';
import { startSimulatorProcess, waitForPoller } from './services';
import { stageTimeline } from './timeline';
import { startBenchWorker, type BenchWorker } from './workerProcess';

// The peer bench (`npm run bench -- --peer`, issue 42): the collector a user would otherwise run,
// NeMo Gym 0.4.0's `ng_collect_rollouts` (side A), against our collect stage in `servers.mode:
// attach` (side B), on the same NeMo Gym servers and the same rows, taking turns.
//
// The servers: `ng_run` serving the Gym config the demo publishes (tool_simulation_agent +
// single_step_tool_use_with_argument_comparison resources server) with NeMo Gym's own `vllm_model`
// as `policy_model`, pointed at the seeded policy simulator (the embedded stack of `pivot-miner
// simulators --seed 7`, in a process of its own). The rows: the demo's published pivots, each
// repeated num_repeats times with a seed per repeat (NeMo Gym's `num_repeats_add_seed`, our
// `seed_per_repeat`), concurrency 16 on both sides.
//
// The stage each side is timed over: materialize → aggregate metrics written.
// - A runs with PYTHONUNBUFFERED=1; its stage begins when it prints the first line of its row
//   preprocessing ("Repeating rows ...", before it reads the input and writes the materialized
//   file) and ends when it prints "Finished rollout collection!", right after it wrote
//   `<out>_aggregate_metrics.json`. Its Python start-up (imports, Hydra, the head server's config)
//   is outside, and printed beside it. CPU of the collector and the servers is read from /proc at
//   those two lines.
// - B's stage is read from the Temporal server's event times: the materialize activity started →
//   the finish activity (merge rest, reward profile, aggregate metrics) completed; CPU from /proc
//   samples every 100 ms, interpolated to those instants. The worker and the Temporal dev server
//   are our collector; both are counted.
// The servers' CPU is every process of ng_run's session (its three servers, Ray) plus the
// simulator, on both sides alike.

const CONCURRENCY = 16;
const WARMUP_ROUNDS = 1;
const A_START = /Repeating rows|Reading rows|Using `/;
const A_END = 'Finished rollout collection!';

export interface PeerOptions {
  numRepeats: number;
  cycles: number;
  /** A published pivots.jsonl whose Gym config YAML sits beside it; unset = run the demo for them. */
  pivotsPath?: string;
  /** Profile the worker in one extra, uncounted B round and summarize where its CPU went. */
  cpuProfileDir?: string;
  keep: boolean;
}

const log = (line: string) => console.log(line);
const round2 = (x: number) => Math.round(x * 100) / 100;

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').filter((l) => l !== '').length;
}

interface SideA {
  install: NemoGymInstall;
  headPort: number;
  pivotsPath: string;
  numRepeats: number;
  servers: Record<string, number[]>;
  /** Our worker and dev server, idle during A: their CPU then is what they cost doing nothing. */
  idle: Record<string, number[]>;
}

async function runA(a: SideA, dir: string, index: number): Promise<{ round: PeerRound; rolloutsPath: string }> {
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'rollouts.jsonl');
  const spawnedAt = Date.now();
  const child = spawn(
    path.join(a.install.binDir, 'ng_collect_rollouts'),
    [
      `+head_server={host:127.0.0.1,port:${a.headPort}}`,
      `+input_jsonl_fpath=${a.pivotsPath}`,
      `+output_jsonl_fpath=${out}`,
      `+num_repeats=${a.numRepeats}`,
      '+num_repeats_add_seed=true',
      `+num_samples_in_parallel=${CONCURRENCY}`,
    ],
    { cwd: dir, env: { ...a.install.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = child.pid!;
  let output = '';
  type Mark = { t: number; collector: number; servers: Record<string, number>; idle: Record<string, number> };
  let start: Mark | undefined;
  let end: Mark | undefined;
  const mark = (): Mark => ({ t: Date.now(), collector: processTree(pid).reduce((s, p) => s + cpuSeconds(p), 0), servers: groupCpu(a.servers), idle: groupCpu(a.idle) });
  const onData = (d: Buffer) => {
    // Read /proc at once, before anything else runs: the line was printed a moment ago.
    const text = d.toString('utf8');
    if (!start && A_START.test(text)) start = mark();
    output += text;
    if (!end && output.includes(A_END)) end = mark();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const exitedAt = Date.now();
  if (code !== 0 || !start || !end) {
    throw new Error(`ng_collect_rollouts exited ${code}${!start ? ', its stage start line never came' : ''}${!end ? ', it never finished' : ''}; last output:\n${output.slice(-3000)}`);
  }
  return {
    rolloutsPath: out,
    round: {
      side: 'A',
      index,
      rollouts: lineCount(out),
      stageSeconds: (end.t - start.t) / 1000,
      collectorCpu: { ng_collect_rollouts: end.collector - start.collector },
      serversCpu: minus(end.servers, start.servers),
      load: loadNow(),
      note:
        `Python start-up ${round2((start.t - spawnedAt) / 1000)} s, exit ${round2((exitedAt - end.t) / 1000)} s (not in the stage); ` +
        `our idle ${Object.entries(minus(end.idle, start.idle)).map(([k, s]) => `${k} ${round2((1000 * s) / ((end!.t - start!.t) / 1000))}`).join(', ')} CPU-ms/s meanwhile`,
    },
  };
}

interface SideB {
  client: Client;
  temporalPid: number;
  worker: BenchWorker;
  taskQueue: string;
  plan: (runDir: string) => RunPlan;
  pivotsPath: string;
  servers: Record<string, number[]>;
}

async function runB(b: SideB, dir: string, index: number, name: string): Promise<{ round: PeerRound; rolloutsPath: string; threads: Record<string, number> }> {
  mkdirSync(dir, { recursive: true });
  const groups = { worker: [b.worker.pid], temporal: [b.temporalPid], ...Object.fromEntries(Object.entries(b.servers).map(([k, v]) => [`server:${k}`, v])) };
  // startCpuTrace takes one pid per name: sum the groups' pids by sampling each pid under its own name.
  const pids: Record<string, number> = {};
  for (const [group, list] of Object.entries(groups)) list.forEach((pid, i) => (pids[`${group}#${i}`] = pid));
  const threadsBefore = threadCpu(b.worker.pid);
  const trace = startCpuTrace(pids);
  const run = await runDurableStage(b.client, {
    taskQueue: b.taskQueue,
    workflowId: `peer-${process.pid}-${name}`,
    plan: b.plan(dir),
    stage: 'collect',
    inputPath: b.pivotsPath,
    outPrefix: path.join(dir, 'rollouts'),
  });
  const cpu = trace.stop();
  const threads = minus(threadCpu(b.worker.pid), threadsBefore);
  const timeline = stageTimeline(run.runs);
  const from = timeline.windows.materialize[0];
  const to = timeline.windows.finish[1];
  const used = cpu.between(from, to);
  const sumGroup = (prefix: string) => Object.entries(used).filter(([k]) => k.startsWith(`${prefix}#`)).reduce((s, [, v]) => s + v, 0);
  const failed = run.result.merge.failedKeys;
  return {
    rolloutsPath: run.result.merge.rolloutsPath,
    threads,
    round: {
      side: 'B',
      index,
      rollouts: run.result.merge.completed,
      stageSeconds: (to - from) / 1000,
      collectorCpu: { worker: sumGroup('worker'), temporal: sumGroup('temporal') },
      serversCpu: Object.fromEntries(Object.keys(b.servers).map((k) => [k, sumGroup(`server:${k}`)])),
      load: loadNow(),
      note: `client start → result ${round2(run.seconds)} s, ${timeline.chunks} chunks${failed ? `, ${failed} failed` : ''}`,
    },
  };
}

/** The demo's published pivots and Gym config, from a demo pipeline run on our worker. */
async function demoPivots(client: Client, taskQueue: string, dir: string): Promise<string> {
  const result = (await client.workflow.execute('pivotMiningWorkflow', {
    taskQueue,
    workflowId: `peer-${process.pid}-demo`,
    args: [{ config_path: 'configs/demo.yaml', run_id: 'peer-demo' }],
  })) as PivotMiningResult;
  const rowsDir = path.join(dir, 'rows');
  mkdirSync(rowsDir, { recursive: true });
  copyFileSync(result.pivotsPath, path.join(rowsDir, 'pivots.jsonl'));
  copyFileSync(result.gymConfigPath, path.join(rowsDir, path.basename(result.gymConfigPath)));
  return path.join(rowsDir, 'pivots.jsonl');
}

function gymConfigBeside(pivotsPath: string): string {
  const yamls = readdirSync(path.dirname(pivotsPath)).filter((f) => f.endsWith('.yaml'));
  if (yamls.length !== 1) throw new Error(`expected one Gym config YAML beside ${pivotsPath}, found ${yamls.length ? yamls.join(', ') : 'none'}`);
  return path.join(path.dirname(pivotsPath), yamls[0]!);
}

export async function runPeerBench(opts: PeerOptions): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-peer-'));
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const server = await ensureDevServer({ port: await freePort(), uiPort: await freePort(), stateDir: path.join(dir, 'state') });
    cleanups.push(() => server.stop());
    const [temporalPid] = childPidsMatching('start-dev');
    if (temporalPid === undefined) throw new Error('the Temporal dev server is not a child of the bench (a reused server cannot be measured)');
    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection });
    const taskQueue = `pivot-peer-${process.pid}`;
    const withPerf = opts.cpuProfileDir !== undefined && perfAvailable();
    const startWorker = (queue: string, extraEnv?: { cpuProfileDir: string }) => {
      const worker = startBenchWorker({
        temporalAddress: server.address,
        taskQueue: queue,
        artifactsRoot: dir,
        logPath: path.join(dir, `${queue}.log`),
        // --perf-basic-prof names JIT-compiled functions for `perf` (peerPerf.ts); it only writes a map file as code compiles.
        nodeOptions: extraEnv ? `--require ${path.join(__dirname, 'peerCpuProfile.cjs')}${withPerf ? ' --perf-basic-prof' : ''}` : undefined,
      });
      return worker;
    };
    if (opts.cpuProfileDir) {
      mkdirSync(opts.cpuProfileDir, { recursive: true });
      for (const f of readdirSync(opts.cpuProfileDir)) if (f === 'start' || f === 'stop' || f.endsWith('.cpuprofile')) rmSync(path.join(opts.cpuProfileDir, f));
      process.env.PIVOT_PEER_CPU_PROFILE_DIR = opts.cpuProfileDir;
    }
    const worker = startWorker(taskQueue);
    cleanups.push(() => worker.stop());
    await Promise.race([waitForPoller(client, taskQueue), worker.exited]);
    // The profiled worker starts now too, idle until its round: a worker refuses to start once a
    // source file changed since the last build, and others may be editing this work tree meanwhile.
    const profiledQueue = `${taskQueue}-profiled`;
    const profiled = opts.cpuProfileDir ? startWorker(profiledQueue, { cpuProfileDir: opts.cpuProfileDir }) : undefined;
    if (profiled) {
      cleanups.push(() => profiled.stop());
      await Promise.race([waitForPoller(client, profiledQueue), profiled.exited]);
    }

    let pivotsPath: string;
    if (opts.pivotsPath) {
      const rowsDir = path.join(dir, 'rows');
      mkdirSync(rowsDir, { recursive: true });
      const gymConfig = gymConfigBeside(opts.pivotsPath);
      pivotsPath = path.join(rowsDir, 'pivots.jsonl');
      copyFileSync(opts.pivotsPath, pivotsPath);
      copyFileSync(gymConfig, path.join(rowsDir, path.basename(gymConfig)));
      log(`rows: ${opts.pivotsPath} (--pivots)`);
    } else {
      const t = Date.now();
      pivotsPath = await Promise.race([demoPivots(client, taskQueue, dir), worker.exited]);
      log(`rows: the demo's published pivots (configs/demo.yaml run on the bench's worker in ${round2((Date.now() - t) / 1000)} s)`);
    }
    const gymConfigPath = gymConfigBeside(pivotsPath);
    const pivotLines = readFileSync(pivotsPath, 'utf8').split('\n').filter((l) => l !== '');
    const agentName = (JSON.parse(pivotLines[0]!) as { agent_ref: { name: string } }).agent_ref.name;

    const sims = await startSimulatorProcess(7);
    cleanups.push(() => sims.stop());
    const install = ensureNemoGym();
    const headPort = await ngRunHeadPort();
    const t = Date.now();
    const ngRun = await startNgRun(install, {
      configPaths: [gymConfigPath, 'responses_api_models/vllm_model/configs/vllm_model.yaml'],
      headPort,
      overrides: [`+policy_base_url=${sims.urls.model}/v1`, '+policy_api_key=unused', '+policy_model_name=simulated-policy'],
      cwd: dir,
      logFile: path.join(dir, 'ng_run.log'),
    });
    cleanups.push(() => ngRun.stop());
    const servers = serverGroups(ngRun, sims);
    const rows = pivotLines.length * opts.numRepeats;
    log(
      `pivot-miner peer bench: ${pivotLines.length} pivots × num_repeats ${opts.numRepeats} = ${rows} rollouts a side, concurrency ${CONCURRENCY}, ` +
        `${WARMUP_ROUNDS} warm-up round a side, then A B B A × ${opts.cycles}; ${os.cpus().length} CPUs, load ${loadNow()} (a shared host: figures are noisy)`,
    );
    log(
      `servers: ng_run (NeMo Gym 0.4.0, head ${ngRun.headUrl}, ready in ${round2((Date.now() - t) / 1000)} s) serving ${path.basename(gymConfigPath)} + vllm_model → ` +
        `seeded policy simulator ${sims.urls.model}; processes: ${Object.entries(servers).map(([k, v]) => `${k} ×${v.length}`).join(', ')}`,
    );
    log(`A = ng_collect_rollouts against the head server; B = pivot-miner collect stage (servers.mode: attach, head_url), worker ${worker.pid}, Temporal dev server ${temporalPid}; work dir ${dir}`);

    const plan = (runDir: string): RunPlan => ({
      runId: 'peer',
      runDir,
      baseDir: dir,
      config: pipelineConfigSchema.parse({
        name: 'peer',
        seed: 7,
        servers: { mode: 'attach', head_url: ngRun.headUrl },
        collect: { input_jsonl: pivotsPath, agent_name: agentName, num_repeats: opts.numRepeats, seed_per_repeat: true, max_concurrency: CONCURRENCY },
      }),
    });
    const sideA: SideA = { install, headPort, pivotsPath, numRepeats: opts.numRepeats, servers, idle: { worker: [worker.pid], 'Temporal dev server': [temporalPid] } };
    const sideB: SideB = { client, temporalPid, worker, taskQueue, plan, pivotsPath, servers };

    const rounds: PeerRound[] = [];
    const outputs: Array<{ round: PeerRound; rolloutsPath: string }> = [];
    const threadTotals: Record<string, number> = {};
    let serial = 0;
    const doA = async (index: number) => {
      const r = await runA(sideA, path.join(dir, 'a', String(++serial)), index);
      log(roundLine(r.round));
      rounds.push(r.round);
      outputs.push(r);
    };
    const doB = async (index: number) => {
      const name = `b${++serial}`;
      const r = await Promise.race([runB(sideB, path.join(dir, 'runs', name), index, name), worker.exited]);
      log(roundLine(r.round));
      rounds.push(r.round);
      outputs.push(r);
      if (index > 0) for (const [k, s] of Object.entries(r.threads)) threadTotals[k] = (threadTotals[k] ?? 0) + s;
    };
    for (let w = 0; w < WARMUP_ROUNDS; w++) {
      await doA(0);
      await doB(0);
    }
    let index = 0;
    for (let c = 0; c < opts.cycles; c++) {
      await doA(++index);
      await doB(++index);
      await doB(++index);
      await doA(++index);
    }

    // Rewards: every round's, warm-ups included, against the first counted A round's.
    const reference = outputs.find((o) => o.round.side === 'A' && o.round.index > 0)!;
    const referenceRewards = rewardsByKey(readFileSync(reference.rolloutsPath, 'utf8').split('\n'));
    let rewardsEqual = referenceRewards.size === rows;
    for (const o of outputs) {
      const cmp = compareRewards(referenceRewards, rewardsByKey(readFileSync(o.rolloutsPath, 'utf8').split('\n')));
      if (!cmp.equal) {
        rewardsEqual = false;
        log(
          `rewards DIFFER: ${o.round.side} ${o.round.index === 0 ? 'warm-up' : `round ${o.round.index}`} vs A round ${reference.round.index}: ` +
            `missing ${cmp.missing.join(' ') || '-'}; extra ${cmp.extra.join(' ') || '-'}; differing ${cmp.differing.join(' ') || '-'}`,
        );
      }
    }
    log(
      `rewards: ${rewardsEqual ? 'equal' : 'NOT equal'} on all ${referenceRewards.size} (task, rollout) keys in all ${outputs.length} rounds ` +
        `(reference A round ${reference.round.index}; ${[...referenceRewards.values()].filter((r) => r === 1).length} of them reward 1)`,
    );

    const summary = summarize(rounds);
    summaryLines(summary).forEach(log);
    const bRollouts = rounds.filter((r) => r.side === 'B' && r.index > 0).reduce((s, r) => s + r.rollouts, 0);
    log(
      `worker CPU by thread over the counted B rounds (µs/rollout, whole client start → result): ` +
        Object.entries(threadTotals)
          .filter(([, s]) => s > 0)
          .sort((x, y) => y[1] - x[1])
          .map(([k, s]) => `${k} ${((1e6 * s) / bRollouts).toFixed(0)}`)
          .join(', '),
    );

    if (opts.cpuProfileDir && profiled) {
      // The worker with the sampler, on its own queue: one warm-up round, then one profiled round.
      const sideP: SideB = { ...sideB, worker: profiled, taskQueue: profiledQueue };
      const warm = await runB(sideP, path.join(dir, 'runs', 'profile-warmup'), 0, 'profile-warmup');
      log(`profiled worker, warm-up: ${roundLine(warm.round)}`);
      writeFileSync(path.join(opts.cpuProfileDir, 'start'), '');
      await sleep(200);
      const p = await runB(sideP, path.join(dir, 'runs', 'profiled'), 0, 'profiled');
      writeFileSync(path.join(opts.cpuProfileDir, 'stop'), '');
      await sleep(2000);
      log(`profiled round (the sampler's cost included, NOT counted): ${roundLine(p.round)}`);
      log(
        `  its worker CPU by thread (µs/rollout): ` +
          Object.entries(p.threads)
            .filter(([, s]) => s > 0)
            .sort((x, y) => y[1] - x[1])
            .map(([k, s]) => `${k} ${((1e6 * s) / p.round.rollouts).toFixed(0)}`)
            .join(', '),
      );
      log("V8's sampler, the profiled round's worker threads (samples on wall time: on a busy host they include waits for a core):");
      profileLines(summarizeProfileDir(opts.cpuProfileDir, [path.join(repoRoot, 'dist/cli.js')]), p.round.rollouts).forEach(log);
      if (withPerf) {
        // One more round on the same worker with V8's sampler off and Linux's perf on: on-CPU time of every thread.
        const data = path.join(opts.cpuProfileDir, 'perf.data');
        const perf = startPerf(profiled.pid, data);
        await sleep(500);
        const q = await runB(sideP, path.join(dir, 'runs', 'perf'), 0, 'perf');
        await perf.stop();
        const cpuSeconds = Object.values(q.threads).reduce((s, x) => s + x, 0);
        log(`perf round (perf's cost included, NOT counted): ${roundLine(q.round)}`);
        log(`Linux perf, on-CPU samples of the worker's threads over that round (${((1e6 * cpuSeconds) / q.round.rollouts).toFixed(0)} µs/rollout of CPU in all, client start → result):`);
        perfLines(data, cpuSeconds, q.round.rollouts, [path.join(repoRoot, 'dist/cli.js')]).forEach(log);
      }
    }

    log(
      peerJsonLine(summary, rewardsEqual, {
        rollouts_per_round: rows,
        pairs: summary.pairs,
        a_rollouts_per_s: round2(summary.a.rate),
        b_rollouts_per_s: round2(summary.b.rate),
        a_collector_cpu_ms: round2(summary.a.collectorCpuMs),
        b_worker_cpu_ms: round2(summary.b.workerCpuMs),
        b_temporal_cpu_ms: round2(summary.b.temporalCpuMs),
        servers_cpu_ratio: Math.round(summary.serversCpuRatio * 1000) / 1000,
        load_end: loadNow(),
      }),
    );
    if (!rewardsEqual) process.exitCode = 1;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => console.error(`peer bench cleanup: ${String(err)}`));
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }
}

