import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import YAML from 'yaml';
import type { PivotMiningResult } from '../../contracts/payloads';
import { startAgentServer } from '../../servers/agent';
import { startResourcesServer } from '../../servers/resources';
import { createPivotWorker, releaseWorkerResources } from '../../workers/pivotWorker';
import { ensureDevServer } from '../lib/devServer';
import { freePort } from '../lib/net';
import { loadNow } from './benchContext';
import { startEngine, type EngineSettings } from './overlapEngines';
import { busyShare, extent, idleShare, type Span } from './overlapMetrics';

// `npm run bench -- --overlap` (issue 51): the pipeline on two engine simulators, a source engine the
// agent calls during collect and a policy engine local profiling calls, each with a per-call latency
// and fixed slots; and the same seed on one engine serving both stages. Runs the sequential pipeline
// and the overlapped one (`overlap: false` and `true`), alternating, two rounds. The last line is one
// JSON object.

export type PipelineMode = 'sequential' | 'overlapped';

export interface OverlapBenchOptions {
  /** collect.num_repeats over the demo tasks: the size of both stages. */
  repeats: number;
  /** The policy engine, and the one engine of the one-engine runs. */
  engine: EngineSettings;
  /** Slots of the source engine of the two-engine runs (same latency): fewer, so collect lasts as long as profiling. */
  sourceSlots: number;
  rounds: number;
  keep: boolean;
}

interface BenchRun {
  client: Client;
  /** The worker's base directory: config paths are relative to it. */
  baseDir: string;
  opts: OverlapBenchOptions;
}

export interface RunFigures {
  mode: PipelineMode;
  engines: 1 | 2;
  sourceSlots: number;
  policySlots: number;
  wallS: number;
  source: Span[];
  policy: Span[];
  digest: string;
}

const REPO = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-overlap-bench';
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const meanOf = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
/** The sizing: each stage keeps its engine working at least this long when it runs alone. */
export const STAGE_ALONE_TARGET_S = 60;

function benchConfig(
  opts: OverlapBenchOptions,
  urls: { agent: string; resources: string; policy: string },
  tasksPath = 'tasks.jsonl',
  sourceSlots = opts.engine.slots,
) {
  const chunking = { chunk_size: 32, max_chunks_in_flight: 4, max_concurrency: 2 * opts.engine.slots };
  return {
    name: 'overlap_bench',
    seed: 7,
    servers: { mode: 'attach', agent_url: urls.agent, resources_url: urls.resources },
    collect: {
      input_jsonl: tasksPath,
      agent_name: 'demo_tool_agent',
      num_repeats: opts.repeats,
      seed_per_repeat: true,
      ...chunking,
      // A chunk's rollouts can only go to profiling once the chunk has finished: chunks as small as the
      // source engine's slots, so rollouts reach the policy engine a few at a time, as they finish.
      chunk_size: sourceSlots,
      // As many rollouts in flight as the source engine has slots: the rest wait in the worker, where
      // the oldest chunk goes first, so chunks finish one after another. With more, they would queue in
      // the engine in arrival order, and the chunks in flight would all finish together at their end.
      max_concurrency: sourceSlots,
    },
    convert: { min_source_reward: 1.0, source_preference: 'prefer_mixed' },
    local_profile: {
      // Profiling a little longer than collect, as it usually is (samples x candidates): an engine
      // whose stage is the shorter one waits on the other's output, so only then can both be busy.
      num_samples: 9,
      model: { url: urls.policy, max_concurrency: 2 * opts.engine.slots },
      ...chunking,
    },
    publish: { dataset_name: 'overlap_pivots' },
  };
}

/** SHA-256 over the published dataset directory's files, by name, each with its run's path set aside. */
function datasetDigest(result: PivotMiningResult): string {
  const dir = path.dirname(result.pivotsPath);
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort())
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(path.join(dir, name), 'utf8').split(result.runDir).join('<run_dir>'));
  return hash.digest('hex');
}

/** One pipeline run on fresh engines (one serving both stages, or a source and a policy engine). */
async function runOnce(bench: BenchRun, name: string, mode: PipelineMode, engines: 1 | 2): Promise<RunFigures> {
  const runDir = path.join(bench.baseDir, name);
  mkdirSync(runDir, { recursive: true });
  const { engine, sourceSlots } = bench.opts;
  const slots = { sourceSlots: engines === 2 ? sourceSlots : engine.slots, policySlots: engine.slots };
  const source = await startEngine({ ...engine, slots: slots.sourceSlots }, path.join(runDir, 'source_engine.spans'));
  const policy = engines === 2 ? await startEngine(engine, path.join(runDir, 'policy_engine.spans')) : source;
  const resources = await startResourcesServer();
  const agent = await startAgentServer({ modelUrl: source.url, resourcesUrl: resources.url });
  let result: { wallS: number; digest: string };
  try {
    const urls = { agent: agent.url, resources: resources.url, policy: policy.url };
    // Paths in a config are relative to the worker's base directory.
    const config = {
      ...benchConfig(bench.opts, urls, `${name}/tasks.jsonl`, slots.sourceSlots),
      overlap: mode === 'overlapped',
    };
    copyFileSync(path.join(REPO, 'configs/demo_tasks.jsonl'), path.join(runDir, 'tasks.jsonl'));
    writeFileSync(path.join(runDir, 'config.yaml'), YAML.stringify(config));
    const started = performance.now();
    const done = (await bench.client.workflow.execute('pivotMiningWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: `overlap-bench-${name}`,
      args: [{ config_path: `${name}/config.yaml`, run_id: `overlap-bench-${name}` }],
    })) as PivotMiningResult;
    result = { wallS: (performance.now() - started) / 1000, digest: datasetDigest(done) };
  } finally {
    await agent.close();
    await resources.close();
  }
  const sourceSpans = await source.stop();
  const policySpans = engines === 2 ? await policy.stop() : sourceSpans;
  return { mode, engines, ...slots, ...result, source: sourceSpans, policy: policySpans };
}

/** Seconds between an engine's first and last request: how long its stage kept it working. */
const engineSpanS = (spans: Span[]) => {
  const [from, to] = extent(spans);
  return (to - from) / 1000;
};

/** The share of a one-engine run's engine span (first to last request) with no request in flight. */
export function oneEngineGapShare(spans: Span[]): number {
  const [from, to] = extent(spans);
  return idleShare(spans, from, to);
}

/** The bench's JSON line from its runs: goals are about the overlapped pipeline, against the sequential one. */
export function overlapSummary(runs: RunFigures[]) {
  const of = (mode: PipelineMode, engines: 1 | 2) => runs.filter((r) => r.mode === mode && r.engines === engines);
  const sequential = of('sequential', 2);
  const overlapped = of('overlapped', 2);
  const longest = meanOf(sequential.map((r) => Math.max(engineSpanS(r.source), engineSpanS(r.policy))));
  const overlappedS = meanOf(overlapped.map((r) => r.wallS));
  const reference = sequential[0]?.digest;
  return {
    bench: 'overlap',
    sequential_s: round(meanOf(sequential.map((r) => r.wallS)), 1),
    overlapped_s: round(overlappedS, 1),
    longest_stage_alone_s: round(longest, 1),
    wall_over_longest: round(overlappedS / longest),
    policy_busy: round(meanOf(overlapped.map((r) => busyShare(r.policy, r.policySlots)))),
    source_busy: round(meanOf(overlapped.map((r) => busyShare(r.source, r.sourceSlots)))),
    one_engine_gap_share: round(meanOf(of('overlapped', 1).map((r) => oneEngineGapShare(r.source)))),
    identical: reference !== undefined && runs.every((r) => r.digest === reference),
  };
}

/** Round r runs the modes in alternating order, each on two engines and then on one. */
function schedule(rounds: number, modes: PipelineMode[]): Array<{ mode: PipelineMode; engines: 1 | 2 }> {
  const order = [];
  for (let r = 0; r < rounds; r++) {
    const inRound = r % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of inRound) order.push({ mode, engines: 2 as const }, { mode, engines: 1 as const });
  }
  return order;
}

function runLine(name: string, run: RunFigures): string {
  const stages =
    run.engines === 2
      ? `source engine ${round(engineSpanS(run.source), 1)} s busy ${round(busyShare(run.source, run.sourceSlots))}, ` +
        `policy engine ${round(engineSpanS(run.policy), 1)} s busy ${round(busyShare(run.policy, run.policySlots))}`
      : `one engine ${round(engineSpanS(run.source), 1)} s busy ${round(busyShare(run.source, run.sourceSlots))}, ` +
        `nothing in flight ${round(100 * oneEngineGapShare(run.source), 1)}% of it`;
  return `${name}: ${run.mode}, ${run.engines} engine(s), wall ${round(run.wallS, 1)} s; ${stages} (load ${loadNow()})`;
}

/** Printed before the JSON line: what the figures mean and what the runs could not show. */
function closingLines(runs: RunFigures[]): string[] {
  const sequential = runs.filter((r) => r.mode === 'sequential');
  const shortest = Math.min(
    ...sequential.filter((r) => r.engines === 2).flatMap((r) => [r.source, r.policy].map(engineSpanS)),
  );
  const sameBytes = sequential.every((r) => r.digest === sequential[0]?.digest);
  return [
    `sequential runs (one and two engines, every round) published identical bytes: ${sameBytes ? 'yes' : 'NO'}`,
    `shortest stage alone: ${round(shortest, 1)} s (${shortest >= STAGE_ALONE_TARGET_S ? 'at least' : 'BELOW'} the ${STAGE_ALONE_TARGET_S} s the issue sizes for)`,
    "busy and gap figures below are the overlapped runs'; identical compares every run's dataset with the first sequential run's",
    `busy = served slot-time / (the engine's slots x first-to-last request); gap share = time with nothing in flight / first-to-last request. ` +
      `Engines are sleep-bound simulators, but the worker shares this machine's CPUs: figures are load-bound (load ${loadNow()}).`,
  ];
}

/** The runs in their order, their lines, and the JSON line last. */
async function measure(bench: BenchRun, dir: string): Promise<void> {
  const { opts } = bench;
  const { latencyMs, slots } = opts.engine;
  const engines = `a source engine of ${opts.sourceSlots} and a policy engine of ${slots} slots (one engine: ${slots})`;
  console.log(
    `pivot-miner bench --overlap: demo tasks x ${opts.repeats} repeats, ${engines} at ${latencyMs} ms a call, ` +
      `${opts.rounds} round(s), ${os.cpus().length} CPUs, load ${loadNow()}; work dir ${dir}`,
  );
  const runs: RunFigures[] = [];
  for (const [i, step] of schedule(opts.rounds, ['sequential', 'overlapped']).entries()) {
    const name = `run${i + 1}-${step.mode}-${step.engines}engine`;
    const run = await runOnce(bench, name, step.mode, step.engines);
    runs.push(run);
    console.log(runLine(name, run));
  }
  closingLines(runs).forEach((line) => console.log(line));
  console.log(JSON.stringify(overlapSummary(runs)));
}

/** The whole bench: its own dev server and in-process worker, then the runs, then the JSON line. */
export async function runOverlapBench(opts: OverlapBenchOptions): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-overlap-'));
  const server = await ensureDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    stateDir: path.join(dir, 'state'),
  });
  const baseDir = path.join(dir, 'work');
  mkdirSync(baseDir);
  process.env.PIVOT_MINER_BASE_DIR = baseDir;
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createPivotWorker({ connection: nativeConnection, taskQueue: TASK_QUEUE });
    const working = worker.run();
    try {
      await measure({ client: new Client({ connection }), baseDir, opts }, dir);
    } finally {
      worker.shutdown();
      await working.catch(() => undefined);
    }
  } finally {
    await releaseWorkerResources();
    await nativeConnection.close();
    await connection.close();
    await server.stop();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  }
}
