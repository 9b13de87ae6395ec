import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { RunPlan } from '../../contracts/payloads';
import type { NemoGymInstall, NemoGymVersion } from '../lib/nemoGym';
import { loadNow } from './benchContext';
import { runDurableStage } from './collect';
import { cpuSeconds, reapedChildrenCpuSeconds, startCpuTrace } from './cpu';
import { groupCpu, minus, processTree, threadCpu } from './peerCpu';
import type { PeerRound } from './peerReport';
import { stageTimeline } from './timeline';
import type { BenchWorker } from './workerProcess';

// One round of each side of the peer bench (peer.ts): A, NeMo Gym's `ng_collect_rollouts`; B, our
// collect stage on the bench's worker.
//
// The stage each side is timed over: materialize → the collection's last file written.
// - A runs with PYTHONUNBUFFERED=1; its stage begins when it prints the first line of its row
//   preprocessing ("Repeating rows ...", before it reads the input and writes the materialized
//   file) and ends when its collection's work does: 0.4.0's when it prints "Finished rollout
//   collection!", right after it wrote `<out>_aggregate_metrics.json`; 0.7.0's after that, when it
//   prints its rollout health report ("Quality summary: ..."), as B's finish runs our health checks.
//   Its Python start-up (imports, Hydra, the head server's config) is outside, and printed beside
//   it. CPU of the collector (with the processes it started and waited for: 0.7.0 checks health in
//   a pool of worker processes) and of the servers is read from /proc at those two lines.
// - B's stage is read from the Temporal server's event times: the materialize activity started →
//   the finish activity (merge rest, reward profile, aggregate metrics, health checks) completed;
//   CPU from /proc samples every 100 ms, interpolated to those instants. The worker and the
//   Temporal dev server are our collector; both are counted.
// The servers' CPU is every process of ng_run's session (its servers, Ray) plus the simulator, on
// both sides alike.

export const CONCURRENCY = 16;
const A_START = /Repeating rows|Reading rows|Using `/;
const A_END: Record<NemoGymVersion, string> = {
  '0.4.0': 'Finished rollout collection!',
  '0.7.0': 'Quality summary: ',
};

export const round2 = (x: number) => Math.round(x * 100) / 100;

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').filter((l) => l !== '').length;
}

export interface SideA {
  install: NemoGymInstall;
  headPort: number;
  pivotsPath: string;
  numRepeats: number;
  servers: Record<string, number[]>;
  /** Our worker and dev server, idle during A: their CPU then is what they cost doing nothing. */
  idle: Record<string, number[]>;
}

export async function runA(a: SideA, dir: string, index: number): Promise<{ round: PeerRound; rolloutsPath: string }> {
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
  const mark = (): Mark => ({
    t: Date.now(),
    collector: processTree(pid).reduce((s, p) => s + cpuSeconds(p) + reapedChildrenCpuSeconds(p), 0),
    servers: groupCpu(a.servers),
    idle: groupCpu(a.idle),
  });
  const onData = (d: Buffer) => {
    // Read /proc at once, before anything else runs: the line was printed a moment ago.
    const text = d.toString('utf8');
    if (!start && A_START.test(text)) start = mark();
    output += text;
    if (!end && output.includes(A_END[a.install.version])) end = mark();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const exitedAt = Date.now();
  if (code !== 0 || !start || !end) {
    throw new Error(
      `ng_collect_rollouts exited ${code}${!start ? ', its stage start line never came' : ''}${!end ? ', it never finished' : ''}; last output:\n${output.slice(-3000)}`,
    );
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
        `our idle ${Object.entries(minus(end.idle, start.idle))
          .map(([k, s]) => `${k} ${round2((1000 * s) / ((end!.t - start!.t) / 1000))}`)
          .join(', ')} CPU-ms/s meanwhile`,
    },
  };
}

export interface SideB {
  client: Client;
  temporalPid: number;
  worker: BenchWorker;
  taskQueue: string;
  plan: (runDir: string) => RunPlan;
  pivotsPath: string;
  servers: Record<string, number[]>;
}

export async function runB(
  b: SideB,
  dir: string,
  index: number,
  name: string,
): Promise<{ round: PeerRound; rolloutsPath: string; threads: Record<string, number> }> {
  mkdirSync(dir, { recursive: true });
  const groups = {
    worker: [b.worker.pid],
    temporal: [b.temporalPid],
    ...Object.fromEntries(Object.entries(b.servers).map(([k, v]) => [`server:${k}`, v])),
  };
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
  const sumGroup = (prefix: string) =>
    Object.entries(used)
      .filter(([k]) => k.startsWith(`${prefix}#`))
      .reduce((s, [, v]) => s + v, 0);
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

/** A worker's CPU by thread in µs a rollout, the busiest first. */
export function threadsPerRollout(threads: Record<string, number>, rollouts: number): string {
  return Object.entries(threads)
    .filter(([, s]) => s > 0)
    .sort((x, y) => y[1] - x[1])
    .map(([k, s]) => `${k} ${((1e6 * s) / rollouts).toFixed(0)}`)
    .join(', ');
}
