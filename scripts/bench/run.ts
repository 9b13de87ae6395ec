import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { stageProgressQuery } from '../../contracts/temporal';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { convertToCandidates } from '../../gym/convert';
import { EMBEDDED_AGENT_NAME } from '../../servers/embeddedStack';
import { ensureDevServer } from '../lib/devServer';
import { freePort } from '../lib/net';
import { runBareCollect } from './bare';
import { benchPlan, runDurableStage, type DurableStageRun } from './collect';
import { DEMO_TASKS, writeDistinctRows } from './inputs';
import { startSimulatorProcess, waitForPoller, type SimulatorProcess } from './services';
import { startBenchWorker, type BenchWorker } from './workerProcess';

// `npm run bench [-- --quick]`: orchestration overhead, worker memory and history size, measured
// in one run on the simulators with zero added latency. The last line is one JSON object so the
// figures can be tracked run to run.

const quick = process.argv.includes('--quick');
const heapFlag = process.argv.find((a) => a.startsWith('--worker-max-old-space-mb='));
const workerMaxOldSpaceMb = heapFlag ? Number(heapFlag.split('=')[1]) : undefined;
// The largest scale run doubles as the local-profile run at scale (12,500 candidates x 8 samples).
const SIZES = quick ? { throughputTasks: 50, scaleRows: [2_000, 20_000] } : { throughputTasks: 150, scaleRows: [10_000, 100_000] };
const NUM_REPEATS = 4;
const NUM_SAMPLES = 8;
const CONCURRENCY = 16;
const CHUNK_SIZE = 32;
const CHUNKS_IN_FLIGHT = 4;
const CONTINUE_AS_NEW_AFTER_EVENTS = 4000;
const MILLION = 1_000_000;

const MB = 1024 * 1024;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.log(line);

interface Bench {
  client: Client;
  temporalAddress: string;
  sims: SimulatorProcess;
  dir: string;
}

let workerSerial = 0;

/** One fresh worker process per measurement, so its peak RSS belongs to that measurement alone. */
async function withWorker<T>(bench: Bench, body: (taskQueue: string, worker: BenchWorker) => Promise<T>): Promise<{ value: T; peakRssBytes: number }> {
  const taskQueue = `pivot-bench-${process.pid}-${++workerSerial}`;
  const worker = startBenchWorker({
    temporalAddress: bench.temporalAddress,
    taskQueue,
    artifactsRoot: bench.dir,
    logPath: path.join(bench.dir, `${taskQueue}.log`),
    maxOldSpaceMb: workerMaxOldSpaceMb,
  });
  try {
    await Promise.race([waitForPoller(bench.client, taskQueue), worker.exited]);
    const value = await Promise.race([body(taskQueue, worker), worker.exited]);
    return { value, peakRssBytes: worker.peakRssBytes() };
  } finally {
    await worker.stop();
  }
}

function planFor(bench: Bench, runName: string) {
  const runDir = path.join(bench.dir, 'runs', runName);
  mkdirSync(runDir, { recursive: true });
  const plan = benchPlan({
    runDir,
    baseDir: bench.dir,
    agentUrl: bench.sims.urls.agent,
    modelUrl: bench.sims.urls.model,
    agentName: EMBEDDED_AGENT_NAME,
    numRepeats: NUM_REPEATS,
    numSamples: NUM_SAMPLES,
    chunkSize: CHUNK_SIZE,
    maxChunksInFlight: CHUNKS_IN_FLIGHT,
    maxConcurrency: CONCURRENCY,
  });
  return { runDir, plan };
}

/**
 * Bare and durable alternate A B B A on the same simulator process, so drift in the machine's load
 * (other processes, JIT, caches) weighs on both sides alike; each side's rate is rows over seconds summed.
 */
async function throughput(bench: Bench) {
  const tasks = path.join(bench.dir, 'throughput_tasks.jsonl');
  const warmupTasks = path.join(bench.dir, 'warmup_tasks.jsonl');
  await writeDistinctRows(DEMO_TASKS, tasks, SIZES.throughputTasks);
  await writeDistinctRows(DEMO_TASKS, warmupTasks, 20);
  const bareOpts = { agentUrl: bench.sims.urls.agent, agentName: EMBEDDED_AGENT_NAME, numRepeats: NUM_REPEATS, concurrency: CONCURRENCY };
  const bare = { rows: 0, seconds: 0 };
  const runBare = async (name: string, tasksPath: string) => {
    const r = await runBareCollect({ ...bareOpts, tasksPath, outPath: path.join(bench.dir, `bare_${name}.jsonl`) });
    if (tasksPath === tasks) {
      bare.rows += r.rows;
      bare.seconds += r.seconds;
    }
  };

  const { value: durable } = await withWorker(bench, async (taskQueue) => {
    const runDurable = async (name: string, inputPath: string) => {
      const { runDir, plan } = planFor(bench, name);
      const run = await runDurableStage(bench.client, {
        taskQueue,
        workflowId: `bench-${process.pid}-${name}`,
        plan,
        stage: 'collect',
        inputPath,
        outPrefix: path.join(runDir, 'rollouts'),
      });
      return { run, runDir };
    };
    await runBare('warmup', warmupTasks);
    await runDurable('collect_warmup', warmupTasks);
    await runBare('a1', tasks);
    const first = await runDurable('collect_b1', tasks);
    const second = await runDurable('collect_b2', tasks);
    await runBare('a2', tasks);
    return { first, second };
  });
  const durableRows = durable.first.run.result.merge.completed + durable.second.run.result.merge.completed;
  const durableSeconds = durable.first.run.seconds + durable.second.run.seconds;
  if (durableRows !== bare.rows) throw new Error(`the durable stage completed ${durableRows} rollouts, the bare loop ${bare.rows}`);
  const bareRate = bare.rows / bare.seconds;
  const durableRate = durableRows / durableSeconds;
  log(`collect throughput (gym_agent /run, 2 x ${durableRows / 2} rollouts = ${SIZES.throughputTasks} tasks x ${NUM_REPEATS} per round, concurrency ${CONCURRENCY}, order A B B A):`);
  log(`  (a) bare undici loop      ${round(bareRate, 1)} rollouts/s (${round(bare.seconds, 1)} s)`);
  log(`  (b) durable collect stage ${round(durableRate, 1)} rollouts/s (${round(durableSeconds, 1)} s: materialize, ${durable.first.run.result.materialize.chunks} chunks, merge, profile per round)`);
  log(`  durable / bare = ${round(durableRate / bareRate, 3)}`);
  return { bareRate, durableRate, durable: durable.first, durableRuns: [durable.first.run, durable.second.run] };
}

async function candidatesFrom(collectRunDir: string, collect: DurableStageRun): Promise<string> {
  const summary = await convertToCandidates({
    inputs: [collect.result.merge.rolloutsPath],
    outDir: collectRunDir,
    rewardProfilePath: collect.result.profile.rewardProfilingPath,
    sourceRoot: collectRunDir,
    agent_name: 'bench_pivot_agent',
    source_format: 'gym_rollouts',
  });
  if (summary.counts.candidates === 0) throw new Error('the collect run gave no pivot candidates to profile');
  return summary.candidatesPath;
}

/** A local-profile stage (single-step against the policy simulator) over `candidates` x 8 samples, in a fresh worker. */
async function localProfileRun(bench: Bench, candidatesSource: string, candidates: number, name: string) {
  const { runDir, plan } = planFor(bench, name);
  // Local profiling reads only candidates inside its run directory, as a pipeline's own would be.
  const inputPath = path.join(runDir, 'candidates.jsonl');
  await writeDistinctRows(candidatesSource, inputPath, candidates);
  const workflowId = `bench-${process.pid}-${name}`;
  const rssByPhase = new Map<string, number>();
  // Sampled, so a phase's figure can miss a short spike; the peak overall is the kernel's VmHWM.
  // Stopped and awaited before anything else happens, even when the worker dies, so no query is
  // left in flight on a connection being closed.
  let sampling = Promise.resolve();
  let finished = false;
  const sample = async (worker: BenchWorker) => {
    // A query can fail while the workflow continues as new; the sample then counts for the last phase seen.
    let phase = 'starting';
    while (!finished) {
      phase = await bench.client
        .withDeadline(Date.now() + 2000, () => bench.client.workflow.getHandle(workflowId).query(stageProgressQuery))
        .then((p) => p.stage.split(':')[1] ?? p.stage, () => phase);
      rssByPhase.set(phase, Math.max(rssByPhase.get(phase) ?? 0, worker.rssBytes()));
      await sleep(500);
    }
  };
  let measured;
  try {
    measured = await withWorker(bench, (taskQueue, worker) => {
      sampling = sample(worker);
      return runDurableStage(bench.client, {
        taskQueue,
        workflowId,
        plan,
        stage: 'local_profile',
        inputPath,
        outPrefix: path.join(runDir, 'local_profile'),
        continueAsNewAfterEvents: CONTINUE_AS_NEW_AFTER_EVENTS,
      });
    });
  } finally {
    finished = true;
    await sampling;
  }
  const { value: run, peakRssBytes } = measured;
  const phases = [...rssByPhase].map(([phase, bytes]) => `${phase} ${round(bytes / MB, 0)}`).join(', ');
  return { run, peakRssBytes, phases, rows: run.result.materialize.rows };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-bench-'));
  const keep = process.argv.includes('--keep');
  const server = await ensureDevServer({ port: await freePort(), uiPort: await freePort(), stateDir: path.join(dir, 'state') });
  const sims = await startSimulatorProcess(7);
  const connection = await Connection.connect({ address: server.address });
  const bench: Bench = { client: new Client({ connection }), temporalAddress: server.address, sims, dir };
  try {
    log(`pivot-miner bench${quick ? ' (--quick)' : ''}: Temporal dev server ${server.address}, simulators (zero added latency) in their own process,`);
    log(`worker = \`pivot-miner worker\` child process (one fresh per memory figure), chunk_size ${CHUNK_SIZE}, ${CHUNKS_IN_FLIGHT} chunks in flight; work dir ${dir}`);
    if (workerMaxOldSpaceMb !== undefined) log(`worker V8 old space capped at ${workerMaxOldSpaceMb} MB (--max-old-space-size)`);

    const tp = await throughput(bench);
    const candidatesSource = await candidatesFrom(tp.durable.runDir, tp.durable.run);

    const scale = [];
    for (const rows of SIZES.scaleRows) {
      const s = await localProfileRun(bench, candidatesSource, rows / NUM_SAMPLES, `scale_${rows}`);
      scale.push(s);
      log(`worker peak RSS at ${s.rows} rows (local_profile, ${s.rows / NUM_SAMPLES} candidates x ${NUM_SAMPLES}): ${round(s.peakRssBytes / MB, 1)} MB, ` +
        `${round(s.rows / s.run.seconds, 1)} rollouts/s, history events per run [${s.run.historyEventsPerRun.join(', ')}]`);
      log(`  sampled RSS by phase (MB): ${s.phases}`);
    }
    const [small, large] = scale as [(typeof scale)[0], (typeof scale)[0]];
    const rssRatio = large.peakRssBytes / small.peakRssBytes;
    log(`  RSS ${large.rows} / ${small.rows} rows = ${round(rssRatio, 3)}`);

    log(`local-profile run at scale: ${large.rows / NUM_SAMPLES} candidates x ${NUM_SAMPLES} = ${large.rows} rollouts in ${round(large.run.seconds, 1)} s ` +
      `(${round(large.rows / large.run.seconds, 1)} rollouts/s), ${large.run.result.profile.tasks} pivots profiled`);

    // History per run is bounded by the continue-as-new threshold, not by the input size: a bigger
    // input only adds runs. The largest scale run shows the per-chunk cost and the per-run maximum.
    const allRuns = [...tp.durableRuns, ...scale.map((s) => s.run)].flatMap((r) => r.historyEventsPerRun);
    const historyMax = Math.max(...allRuns);
    const chunks = large.run.result.materialize.chunks;
    const events = large.run.historyEventsPerRun.reduce((a, b) => a + b, 0);
    const eventsPerChunk = events / chunks;
    const millionChunks = Math.ceil(MILLION / CHUNK_SIZE);
    const chunksPerRun = chunks / large.run.historyEventsPerRun.length;
    const millionRuns = Math.ceil((millionChunks * eventsPerChunk) / CONTINUE_AS_NEW_AFTER_EVENTS);
    log(`history: ${large.rows} rows = ${chunks} chunks -> ${events} events over ${large.run.historyEventsPerRun.length} runs = ${round(eventsPerChunk, 2)} events/chunk, ` +
      `~${Math.round(chunksPerRun)} chunks per run at continue_as_new_after_events=${CONTINUE_AS_NEW_AFTER_EVENTS}`);
    log(`  1,000,000 rollouts / chunk_size ${CHUNK_SIZE} = ${millionChunks} chunks x ${round(eventsPerChunk, 2)} events/chunk = ${Math.round(millionChunks * eventsPerChunk)} events ` +
      `/ ${CONTINUE_AS_NEW_AFTER_EVENTS} per run = ${millionRuns} runs, each ending like the runs measured here (max ${historyMax} events per run, < 10,000)`);

    console.log(
      JSON.stringify({
        quick,
        worker_max_old_space_mb: workerMaxOldSpaceMb ?? null,
        bare_rollouts_per_s: round(tp.bareRate, 1),
        durable_rollouts_per_s: round(tp.durableRate, 1),
        durable_over_bare: round(tp.durableRate / tp.bareRate, 3),
        rss_rows: [small.rows, large.rows],
        rss_mb: [round(small.peakRssBytes / MB, 1), round(large.peakRssBytes / MB, 1)],
        rss_100k_over_10k: round(rssRatio, 3),
        history_events_max_per_run: historyMax,
        history_events_per_chunk: round(eventsPerChunk, 2),
        runs_for_1m_rollouts: millionRuns,
        local_profile_rollouts: large.rows,
        local_profile_rollouts_per_s: round(large.rows / large.run.seconds, 1),
      }),
    );
  } finally {
    await connection.close();
    await sims.stop();
    await server.stop();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}${cause}`);
  process.exitCode = 1;
});
