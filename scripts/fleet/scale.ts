import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import { pipelineConfigSchema } from '../../contracts/config';
import type { RunPlan } from '../../contracts/payloads';
import { runDurableStage } from '../bench/collect';
import { stageTimeline } from '../bench/timeline';
import { candidatesFrom } from '../bench/scale';
import { writeDistinctRows } from '../bench/inputs';
import { Cluster } from './cluster';
import { waitForPollers } from '../lib/pollers';

// Engine-bound throughput on a fleet: local profiling (one policy call a rollout, through the
// replica list) in each of the CELLS below (1-3 engine replicas, 1-3 worker hosts), beside a bare
// loop of the same requests over the same replicas at the same concurrency, without Temporal,
// measured in the same run. Each replica answers SLOTS calls at once in LATENCY_MS each, so one replica serves at most
// SLOTS / LATENCY_MS calls a second, well below what two cores can push through a worker: the
// engines, not the host, bound both sides. Two rounds; within a round the sides alternate order.

const LATENCY_MS = 250;
const SLOTS = 4;
/** Requests in flight from one worker to each replica: above SLOTS, so one worker can fill a replica. */
const CAP = 8;
/** A round of one side lasts about this long when engine-bound, long against its fixed costs. */
const ROUND_SECONDS = 30;
const NUM_SAMPLES = 8;

export interface ScaleSummary {
  durable_over_bare: number;
  replicas_2_over_1: number;
  replicas_3_over_1: number;
  rounds: ScaleRow[][];
}

export interface ScaleRow {
  replicas: number;
  workers: number;
  rollouts: number;
  durable_per_s: number;
  bare_per_s: number;
  ceiling_per_s: number;
  /** The durable stage's seconds outside its chunk span (workflow start, materialize, finish,
   * accounting, result), from the Temporal server's event times: its fixed cost. */
  durable_outside_chunks_s: number;
}

/** The cells: replicas 1-3 with 3 worker hosts, then 1 and 2 worker hosts with 3 replicas. */
const CELLS: Array<{ replicas: number; workers: number }> = [
  { replicas: 1, workers: 3 },
  { replicas: 2, workers: 3 },
  { replicas: 3, workers: 3 },
  { replicas: 3, workers: 1 },
  { replicas: 3, workers: 2 },
];

const round2 = (x: number) => Math.round(x * 100) / 100;

function plan(cluster: Cluster, runDir: string, replicas: number): RunPlan {
  const chunking = { chunk_size: 32, max_chunks_in_flight: 8, max_concurrency: CAP };
  const config = pipelineConfigSchema.parse({
    name: 'fleet_scale',
    seed: 7,
    servers: { mode: 'attach', agent_url: cluster.agentUrl },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: 4, ...chunking },
    local_profile: {
      num_samples: NUM_SAMPLES,
      model: { url: cluster.engineUrls.slice(0, replicas), max_concurrency: CAP },
      ...chunking,
    },
  });
  return { runId: path.basename(runDir), runDir, baseDir: cluster.sharedDir, config };
}

/**
 * The bare side: every materialized request of the durable run, POSTed by a plain pool of lanes to
 * the replica with the fewest requests in flight, as many lanes as the durable side may have in
 * flight. No retries, chunks, files or Temporal.
 */
async function bareLoop(
  materializedPath: string,
  engines: string[],
  lanes: number,
): Promise<{ rows: number; seconds: number }> {
  const bodies = readFileSync(materializedPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.stringify((JSON.parse(l) as { responses_create_params: unknown }).responses_create_params));
  const replicas = engines.map((url) => ({
    url: `${url}/v1/responses`,
    outstanding: 0,
    dispatcher: new Agent({ connections: lanes }),
  }));
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      const r = replicas.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
      r.outstanding++;
      try {
        const res = await request(r.url, {
          method: 'POST',
          body: bodies[i],
          headers: { 'content-type': 'application/json' },
          dispatcher: r.dispatcher,
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${r.url} answered ${res.statusCode}: ${text.slice(0, 200)}`);
        JSON.parse(text);
      } finally {
        r.outstanding--;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(replicas.map((r) => r.dispatcher.close()));
  return { rows: bodies.length, seconds };
}

export async function runScale(cluster: Cluster, log: (l: string) => void): Promise<ScaleSummary> {
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const client = new Client({ connection });
  const dir = path.join(cluster.sharedDir, 'artifacts', 'scale');
  let serial = 0;
  const stage = async (name: string, replicas: number, stageName: 'collect' | 'local_profile', inputPath: string) => {
    const runDir = path.join(dir, `${name}-${++serial}`);
    mkdirSync(runDir, { recursive: true });
    const local = path.join(runDir, path.basename(inputPath));
    if (local !== inputPath)
      await writeDistinctRows(
        inputPath,
        local,
        readFileSync(inputPath, 'utf8')
          .split('\n')
          .filter((l) => l.trim()).length,
      );
    const run = await runDurableStage(client, {
      taskQueue: cluster.opts.taskQueue,
      workflowId: `fleet-scale-${process.pid}-${serial}`,
      plan: plan(cluster, runDir, replicas),
      stage: stageName,
      inputPath: local,
      outPrefix: path.join(runDir, stageName === 'collect' ? 'rollouts' : 'local_profile'),
    });
    return { run, runDir };
  };
  try {
    // Pivot candidates from a short collect of the demo tasks, repeated into local-profile inputs.
    while (cluster.workers.length < 3) cluster.addWorker();
    await waitForPollers(client, cluster.opts.taskQueue, cluster.workers);
    const tasks = path.join(cluster.sharedDir, 'tasks.jsonl');
    await writeDistinctRows(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), tasks, 20);
    const collected = await stage('candidates', 3, 'collect', tasks);
    const candidates = await candidatesFrom(collected.runDir, collected.run);
    const rounds: ScaleRow[][] = [];
    const materializedOf = new Map<string, string>();
    const key = (c: { replicas: number; workers: number }) => `${c.replicas}x${c.workers}`;
    for (let round = 1; round <= 2; round++) {
      const rows: ScaleRow[] = [];
      for (const cell of CELLS) {
        const ceiling = (cell.replicas * SLOTS * 1000) / LATENCY_MS;
        const rollouts = Math.ceil((ceiling * ROUND_SECONDS) / NUM_SAMPLES) * NUM_SAMPLES;
        while (cluster.workers.length > cell.workers) await cluster.loseWorker(cluster.workers.at(-1)!);
        while (cluster.workers.length < cell.workers) cluster.addWorker();
        await waitForPollers(client, cluster.opts.taskQueue, cluster.workers);
        const input = path.join(dir, `candidates_${rollouts}.jsonl`);
        await writeDistinctRows(candidates, input, rollouts / NUM_SAMPLES);
        const engines = cluster.engineUrls.slice(0, cell.replicas);
        const lanes = cell.workers * CAP * cell.replicas;
        let durable: { rows: number; seconds: number; chunkSpanSeconds: number } | undefined;
        let bare: { rows: number; seconds: number } | undefined;
        const runDurable = async () => {
          const { run, runDir } = await stage(
            `r${cell.replicas}w${cell.workers}`,
            cell.replicas,
            'local_profile',
            input,
          );
          materializedOf.set(key(cell), path.join(runDir, 'local_profile_materialized_inputs.jsonl'));
          durable = {
            rows: run.result.materialize.rows,
            seconds: run.seconds,
            chunkSpanSeconds: stageTimeline(run.runs).chunkSpanMs / 1000,
          };
        };
        const runBare = async () => {
          bare = await bareLoop(materializedOf.get(key(cell))!, engines, lanes);
        };
        // Round 1 times the durable side first (its materialized requests are the bare loop's);
        // round 2 times the bare loop first, so neither side always runs second.
        if (round === 1) {
          await runDurable();
          await runBare();
        } else {
          await runBare();
          await runDurable();
        }
        const row: ScaleRow = {
          replicas: cell.replicas,
          workers: cell.workers,
          rollouts: durable!.rows,
          durable_per_s: round2(durable!.rows / durable!.seconds),
          bare_per_s: round2(bare!.rows / bare!.seconds),
          ceiling_per_s: ceiling,
          durable_outside_chunks_s: round2(durable!.seconds - durable!.chunkSpanSeconds),
        };
        log(`[fleet] scale round ${round}: ${JSON.stringify(row)}`);
        rows.push(row);
      }
      rounds.push(rows);
      log(formatScale(rows, round));
    }
    const all = rounds.flat();
    const at = (r: ScaleRow[], replicas: number) =>
      r.find((x) => x.replicas === replicas && x.workers === 3)!.durable_per_s;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return {
      durable_over_bare: Math.round(mean(all.map((r) => r.durable_per_s / r.bare_per_s)) * 1000) / 1000,
      replicas_2_over_1: round2(mean(rounds.map((r) => at(r, 2) / at(r, 1)))),
      replicas_3_over_1: round2(mean(rounds.map((r) => at(r, 3) / at(r, 1)))),
      rounds,
    };
  } finally {
    await connection.close();
    await cluster.stopWorkers();
  }
}

export function formatScale(rows: ScaleRow[], round: number): string {
  const head = `scale round ${round} (local profiling, engine-bound: ${SLOTS} slots x ${LATENCY_MS} ms a replica)`;
  const lines = rows.map(
    (r) =>
      `  replicas ${r.replicas}  worker hosts ${r.workers}  rollouts ${String(r.rollouts).padStart(4)}  durable ${r.durable_per_s.toFixed(1).padStart(6)}/s  bare ${r.bare_per_s.toFixed(1).padStart(6)}/s  ` +
      `durable/bare ${(r.durable_per_s / r.bare_per_s).toFixed(3)}  engine ceiling ${r.ceiling_per_s.toFixed(0)}/s  durable outside chunks ${r.durable_outside_chunks_s.toFixed(2)} s`,
  );
  return [head, ...lines].join('\n');
}

export const SCALE_ENGINES = { engines: 3, engineLatencyMs: LATENCY_MS, engineSlots: SLOTS };
