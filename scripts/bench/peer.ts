import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { pipelineConfigSchema } from '../../contracts/config';
import type { RunPlan } from '../../contracts/payloads';
import { ensureDevServer } from '../lib/devServer';
import { ensureNemoGym, ngRunHeadPort, startNgRun, type NemoGymVersion } from '../lib/nemoGym';
import { freePort } from '../lib/net';
import { loadNow } from './benchContext';
import { childPidsMatching } from './cpu';
import { serverGroups } from './peerCpu';
import { perfAvailable } from './peerPerf';
import { runProfiledRounds } from './peerProfiledRounds';
import { demoPivots, givenPivots, gymConfigBeside } from './peerRows';
import {
  compareRewards,
  peerJsonLine,
  roundLine,
  rewardsByKey,
  summarize,
  summaryLines,
  type PeerRound,
} from './peerReport';
import { CONCURRENCY, round2, runA, runB, threadsPerRollout, type SideA, type SideB } from './peerSides';
import { startSimulatorProcess, waitForPoller } from './services';
import { startBenchWorker } from './workerProcess';

// The peer bench (`npm run bench -- --peer`, issues 42 and 62): the collector a user would otherwise
// run, NeMo Gym's `ng_collect_rollouts` (side A; 0.7.0, the release users install, unless
// --nemo-gym=0.4.0), against our collect stage in `servers.mode: attach` (side B), on the same NeMo
// Gym servers and the same rows, taking turns.
//
// The servers: the same version's `ng_run` serving the Gym config the demo publishes
// (tool_simulation_agent + single_step_tool_use_with_argument_comparison resources server) with NeMo
// Gym's own `vllm_model` as `policy_model`, pointed at the seeded policy simulator (the embedded
// stack of `pivot-miner simulators --seed 7`, in a process of its own); 0.7.0's also runs the
// `legacy_agent` environment server it generates in front of the agent, through which its collector
// reaches the agent. The rows: the demo's published pivots, each repeated num_repeats times with a
// seed per repeat (NeMo Gym's `num_repeats_add_seed`, our `seed_per_repeat`), concurrency 16 on both
// sides.
//
// How each side's stage is timed and its CPU read: peerSides.ts.

const WARMUP_ROUNDS = 1;

export interface PeerOptions {
  /** Side A's `ng_collect_rollouts` and both sides' `ng_run`. */
  nemoGym: NemoGymVersion;
  numRepeats: number;
  cycles: number;
  /** The collect stage's chunk_size; unset, the config's default. */
  chunkSize?: number;
  /** NODE_OPTIONS for our workers, e.g. V8 heap flags to try. */
  workerNodeOptions?: string;
  /** A published pivots.jsonl whose Gym config YAML sits beside it; unset = run the demo for them. */
  pivotsPath?: string;
  /** Profile the worker in one extra, uncounted B round and summarize where its CPU went. */
  cpuProfileDir?: string;
  keep: boolean;
}

const log = (line: string) => console.log(line);

export async function runPeerBench(opts: PeerOptions): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-peer-'));
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const server = await ensureDevServer({
      port: await freePort(),
      uiPort: await freePort(),
      stateDir: path.join(dir, 'state'),
    });
    cleanups.push(() => server.stop());
    const [temporalPid] = childPidsMatching('start-dev');
    if (temporalPid === undefined)
      throw new Error('the Temporal dev server is not a child of the bench (a reused server cannot be measured)');
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
        nodeOptions:
          [
            opts.workerNodeOptions,
            extraEnv
              ? `--require ${path.join(__dirname, '../diagnostics/cpuProfile.cjs')}${withPerf ? ' --perf-basic-prof' : ''}`
              : undefined,
          ]
            .filter((o) => o !== undefined)
            .join(' ') || undefined,
      });
      return worker;
    };
    if (opts.cpuProfileDir) {
      mkdirSync(opts.cpuProfileDir, { recursive: true });
      for (const f of readdirSync(opts.cpuProfileDir))
        if (f === 'start' || f === 'stop' || f.endsWith('.cpuprofile')) rmSync(path.join(opts.cpuProfileDir, f));
      // The preload profiles the one round between <dir>/start and <dir>/stop (peerProfiledRounds.ts).
      process.env.PIVOT_MINER_CPU_PROFILE_DIR = opts.cpuProfileDir;
      process.env.PIVOT_MINER_CPU_PROFILE_WINDOW = 'marked';
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

    const rowsStart = Date.now();
    const pivotsPath = opts.pivotsPath
      ? givenPivots(opts.pivotsPath, dir)
      : await Promise.race([demoPivots(client, taskQueue, dir), worker.exited]);
    log(
      opts.pivotsPath
        ? `rows: ${opts.pivotsPath} (--pivots)`
        : `rows: the demo's published pivots (configs/demo.yaml run on the bench's worker in ${round2((Date.now() - rowsStart) / 1000)} s)`,
    );
    const gymConfigPath = gymConfigBeside(pivotsPath);
    const pivotLines = readFileSync(pivotsPath, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const agentName = (JSON.parse(pivotLines[0]!) as { agent_ref: { name: string } }).agent_ref.name;

    const sims = await startSimulatorProcess(7);
    cleanups.push(() => sims.stop());
    const install = ensureNemoGym(opts.nemoGym);
    const headPort = await ngRunHeadPort();
    const t = Date.now();
    const ngRun = await startNgRun(install, {
      configPaths: [gymConfigPath, 'responses_api_models/vllm_model/configs/vllm_model.yaml'],
      headPort,
      overrides: [
        `+policy_base_url=${sims.urls.model}/v1`,
        '+policy_api_key=unused',
        '+policy_model_name=simulated-policy',
      ],
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
      `servers: ng_run (NeMo Gym ${install.version}, head ${ngRun.headUrl}, ready in ${round2((Date.now() - t) / 1000)} s) serving ${path.basename(gymConfigPath)} + vllm_model → ` +
        `seeded policy simulator ${sims.urls.model}; processes: ${Object.entries(servers)
          .map(([k, v]) => `${k} ×${v.length}`)
          .join(', ')}`,
    );
    log(
      `A = ng_collect_rollouts against the head server; B = pivot-miner collect stage (servers.mode: attach, head_url), worker ${worker.pid}, Temporal dev server ${temporalPid}; work dir ${dir}`,
    );

    const plan = (runDir: string): RunPlan => ({
      runId: 'peer',
      runDir,
      baseDir: dir,
      config: pipelineConfigSchema.parse({
        name: 'peer',
        seed: 7,
        servers: { mode: 'attach', head_url: ngRun.headUrl },
        collect: {
          input_jsonl: pivotsPath,
          agent_name: agentName,
          num_repeats: opts.numRepeats,
          seed_per_repeat: true,
          max_concurrency: CONCURRENCY,
          ...(opts.chunkSize === undefined ? {} : { chunk_size: opts.chunkSize }),
        },
      }),
    });
    log(
      `B's collect stage: chunk_size ${plan(dir).config.collect.chunk_size}${opts.chunkSize === undefined ? ' (the default)' : ' (--chunk-size)'}, max_concurrency ${CONCURRENCY}${opts.workerNodeOptions ? `; workers' NODE_OPTIONS ${opts.workerNodeOptions}` : ''}`,
    );
    const sideA: SideA = {
      install,
      headPort,
      pivotsPath,
      numRepeats: opts.numRepeats,
      servers,
      idle: { worker: [worker.pid], 'Temporal dev server': [temporalPid] },
    };
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
      `worker CPU by thread over the counted B rounds (µs/rollout, whole client start → result): ${threadsPerRollout(threadTotals, bRollouts)}`,
    );

    if (opts.cpuProfileDir && profiled) {
      await runProfiledRounds(
        { ...sideB, worker: profiled, taskQueue: profiledQueue },
        dir,
        opts.cpuProfileDir,
        withPerf,
      );
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
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => console.error(`peer bench cleanup: ${String(err)}`));
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  }
}
