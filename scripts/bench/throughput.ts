import path from 'node:path';
import { EMBEDDED_AGENT_NAME } from '../../servers/embeddedStack';
import { runBareCollect } from './bare';
import { loadNow, planFor, withWorker, type Bench } from './benchContext';
import { runDurableStage } from './collect';
import { cpuSnapshot, cpuUsed, startCpuTrace } from './cpu';
import { runStageInProcess } from './inProcessStage';
import { DEMO_TASKS, writeDistinctRows } from './inputs';
import { stageTimeline, type StagePhase, type StageTimeline } from './timeline';

// Durable collect against its anchor, the bare HTTP loop: same simulators, same rows, same
// concurrency, in the same run. The sides alternate A B B A (per cycle) on one simulator process, so
// drift in the machine's load weighs on both alike; each side's rate is rows over summed seconds.
// With --without-temporal a third side, the stage's activities called in the bench process, runs
// in the middle of each cycle (A B C C B A).

export interface SideMeasure {
  rows: number;
  seconds: number;
  /** CPU seconds per process over this side's runs. */
  cpu: Record<string, number>;
}

/**
 * Warm-up rounds of full size on each side, uncounted. V8 compiles a stage's code as it runs it, and
 * code that runs once per round (materialize, the finish's profile and aggregate metrics, the
 * simulators' /aggregate_metrics) is still climbing V8's tiers after one round: in a fresh process
 * the profile of a 600-rollout round took 275, 132, 89, then 70-90 ms, and materializing it 128,
 * 87, 56, then 30-50 ms. A worker mining every night runs warm, so the bench times it warm; the
 * report prints the warm-up rounds' serial activities beside the counted ones to show they settled.
 */
const WARMUP_ROUNDS = 3;

export interface ThroughputResult {
  concurrency: number;
  rowsPerRound: number;
  /** `tailSeconds`: of its seconds, the aggregate metrics and reward profile after its last rollout. */
  bare: SideMeasure & { tailSeconds: number };
  durable: SideMeasure & {
    timelines: StageTimeline[];
    /** The uncounted warm-up rounds' timelines, first first. */
    warmupTimelines: StageTimeline[];
    /** CPU seconds per phase and process; 'hand-offs' is the workflow's span outside the four phases. */
    cpuByPhase: Record<string, Record<string, number>>;
  };
  /** The stage's activities without Temporal (--without-temporal). */
  inProcess?: SideMeasure & { chunkSpanSeconds: number; serialSeconds: number };
  loads: string[];
  /** A durable collect run directory and its result, for the candidates of the scale runs. */
  sample: { runDir: string; run: Awaited<ReturnType<typeof runDurableStage>> };
}

function addCpu(into: Record<string, number>, used: Record<string, number>): void {
  for (const [name, s] of Object.entries(used)) into[name] = (into[name] ?? 0) + s;
}

export async function measureThroughput(
  bench: Bench,
  opts: { concurrency: number; tasks: number; numRepeats: number; cycles: number; withoutTemporal?: boolean },
): Promise<ThroughputResult> {
  const tag = `c${opts.concurrency}`;
  const tasks = path.join(bench.dir, `throughput_tasks_${tag}.jsonl`);
  const warmupTasks = path.join(bench.dir, `warmup_tasks_${tag}.jsonl`);
  await writeDistinctRows(DEMO_TASKS, tasks, opts.tasks);
  await writeDistinctRows(DEMO_TASKS, warmupTasks, opts.tasks);
  const bare: ThroughputResult['bare'] = { rows: 0, seconds: 0, cpu: {}, tailSeconds: 0 };
  const durable: ThroughputResult['durable'] = {
    rows: 0,
    seconds: 0,
    cpu: {},
    timelines: [],
    warmupTimelines: [],
    cpuByPhase: {},
  };
  const inProcess = opts.withoutTemporal
    ? { rows: 0, seconds: 0, cpu: {}, chunkSpanSeconds: 0, serialSeconds: 0 }
    : undefined;
  const loads: string[] = [];
  let serial = 0;

  const { value: sample } = await withWorker(bench, async (taskQueue, worker) => {
    const pids = () => ({
      bench: process.pid,
      simulators: bench.sims.pid,
      temporal: bench.temporalPid,
      worker: worker.pid,
    });
    const runBare = async (inputPath: string, counted: boolean) => {
      const before = cpuSnapshot(pids());
      const r = await runBareCollect({
        agentUrl: bench.sims.urls.agent,
        agentName: EMBEDDED_AGENT_NAME,
        numRepeats: opts.numRepeats,
        concurrency: opts.concurrency,
        tasksPath: inputPath,
        outPath: path.join(bench.dir, `bare_${tag}_${++serial}.jsonl`),
      });
      if (!counted) return;
      addCpu(bare.cpu, cpuUsed(before, cpuSnapshot(pids())));
      bare.rows += r.rows;
      bare.seconds += r.seconds;
      bare.tailSeconds += r.tailSeconds;
    };
    const runDurable = async (inputPath: string, counted: boolean) => {
      const name = `collect_${tag}_${++serial}`;
      const { runDir, plan } = planFor(bench, name, { maxConcurrency: opts.concurrency, numRepeats: opts.numRepeats });
      const before = cpuSnapshot(pids());
      const trace = startCpuTrace(pids());
      const run = await runDurableStage(bench.client, {
        taskQueue,
        workflowId: `bench-${process.pid}-${name}`,
        plan,
        stage: 'collect',
        inputPath,
        outPrefix: path.join(runDir, 'rollouts'),
      });
      const cpu = trace.stop();
      const timeline = stageTimeline(run.runs);
      if (counted) {
        addCpu(durable.cpu, cpuUsed(before, cpuSnapshot(pids())));
        durable.rows += run.result.merge.completed;
        durable.seconds += run.seconds;
        durable.timelines.push(timeline);
        const phases: StagePhase[] = ['materialize', 'chunks', 'finish'];
        const handoffs = cpu.between(...timeline.windows.workflow);
        for (const phase of phases) {
          const used = cpu.between(...timeline.windows[phase]);
          addCpu((durable.cpuByPhase[phase] ??= {}), used);
          for (const [name, s] of Object.entries(used)) handoffs[name] = (handoffs[name] ?? 0) - s;
        }
        addCpu((durable.cpuByPhase['hand-offs'] ??= {}), handoffs);
      } else {
        durable.warmupTimelines.push(timeline);
      }
      return { runDir, run };
    };
    const runInProcess = async (inputPath: string, counted: boolean) => {
      if (!inProcess) return;
      const { runDir, plan } = planFor(bench, `in_process_${tag}_${++serial}`, {
        maxConcurrency: opts.concurrency,
        numRepeats: opts.numRepeats,
      });
      const before = cpuSnapshot(pids());
      const r = await runStageInProcess(plan, inputPath, path.join(runDir, 'rollouts'));
      if (!counted) return;
      addCpu(inProcess.cpu, cpuUsed(before, cpuSnapshot(pids())));
      inProcess.rows += r.completed;
      inProcess.seconds += r.seconds;
      inProcess.chunkSpanSeconds += r.chunkSpanSeconds;
      inProcess.serialSeconds += r.serialSeconds;
    };
    const warmUpRound = async () => {
      await runBare(warmupTasks, false);
      await runInProcess(warmupTasks, false);
      return runDurable(warmupTasks, false);
    };
    let last = await warmUpRound();
    for (let round = 1; round < WARMUP_ROUNDS; round++) last = await warmUpRound();
    for (let cycle = 0; cycle < opts.cycles; cycle++) {
      loads.push(loadNow());
      await runBare(tasks, true);
      await runDurable(tasks, true);
      await runInProcess(tasks, true);
      await runInProcess(tasks, true);
      last = await runDurable(tasks, true);
      await runBare(tasks, true);
    }
    loads.push(loadNow());
    return last;
  });
  if (durable.rows !== bare.rows)
    throw new Error(`the durable stage completed ${durable.rows} rollouts, the bare loop ${bare.rows}`);
  if (inProcess && inProcess.rows !== bare.rows)
    throw new Error(`the stage without Temporal completed ${inProcess.rows} rollouts, the bare loop ${bare.rows}`);
  return {
    concurrency: opts.concurrency,
    rowsPerRound: opts.tasks * opts.numRepeats,
    bare,
    durable,
    inProcess,
    loads,
    sample,
  };
}
