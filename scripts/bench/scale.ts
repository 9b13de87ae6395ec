import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { stageProgressQuery } from '../../contracts/temporal';
import { convertToCandidates } from '../../gym/convert';
import { loadNow, NUM_SAMPLES, planFor, withWorker, type Bench } from './benchContext';
import { runDurableStage, type DurableStageRun } from './collect';
import { DEMO_TASKS, writeDistinctRows } from './inputs';
import { WorkerExitedError, type BenchWorker, type HeapSample } from './workerProcess';

// Worker memory at scale: a local-profile stage (single-step against the policy simulator) over
// N candidates x 8 samples, each in a fresh worker process so its peak RSS is that run's alone.

const CONTINUE_AS_NEW_AFTER_EVENTS = 4000;
/**
 * Long enough for the worker to settle: start-up work goes on for seconds after it reports RUNNING
 * (the workflow thread loads its bundle, pollers connect), and the heap the worker's start-up
 * collection freed goes back to the OS over V8's next GC cycles. Sampled each second on this
 * machine: 205 MB at 3-10 s, 195 MB at 11-18 s, 158 MB from 19 s on, steady for minutes after.
 */
const IDLE_SETTLE_MS = 25_000;
/** A long run prints where it is this often, so an hour-long million-row run is not silent. */
const PROGRESS_EVERY_MS = 5 * 60_000;
const MB = 1024 * 1024;

export interface ScaleRun {
  rows: number;
  /** Unset when the worker died during the stage (`failure` says how). */
  run?: DurableStageRun;
  failure?: string;
  /** Peak RSS from the start of the stage to its end (the start-up peak excluded); the highest sample if the worker died. */
  peakRssBytes: number;
  /** Peak RSS of the worker's start-up (bundling its workflows), before the stage. */
  startupPeakRssBytes: number;
  /** VmRSS once the worker polls and has settled, before any work. */
  idleRssBeforeBytes: number;
  /** VmRSS after the stage finished and the worker settled again: what the run left behind. */
  idleRssAfterBytes: number;
  /** Highest sampled VmRSS per workflow phase (materialize, chunks, merge, profile). */
  rssByPhase: Map<string, number>;
  /** Highest live heap (after a forced GC) per phase, with --worker-heap; empty otherwise. */
  liveHeapByPhase: Map<string, number>;
  loads: [string, string];
}

export { CONTINUE_AS_NEW_AFTER_EVENTS };

/** Pivot candidates of a finished collect run, to be repeated into local-profile inputs. */
export async function candidatesFrom(collectRunDir: string, collect: DurableStageRun): Promise<string> {
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

/** A short durable collect run over the demo tasks, converted to candidates: the scale runs' input when no throughput run made one. */
export async function sampleCandidates(bench: Bench): Promise<string> {
  const { runDir, plan } = planFor(bench, 'candidates', { numRepeats: 4 });
  const inputPath = path.join(runDir, 'tasks.jsonl');
  await writeDistinctRows(DEMO_TASKS, inputPath, 50);
  const { value: run } = await withWorker(bench, (taskQueue) =>
    runDurableStage(bench.client, {
      taskQueue,
      workflowId: `bench-${process.pid}-candidates`,
      plan,
      stage: 'collect',
      inputPath,
      outPrefix: path.join(runDir, 'rollouts'),
    }),
  );
  return candidatesFrom(runDir, run);
}

function byPhase(samples: HeapSample[], phaseStarts: Array<{ t: number; phase: string }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const sample of samples) {
    let phase = 'idle';
    for (const p of phaseStarts) if (p.t <= sample.t) phase = p.phase;
    out.set(phase, Math.max(out.get(phase) ?? 0, sample.heapUsed));
  }
  return out;
}

export async function localProfileRun(bench: Bench, candidatesSource: string, rows: number): Promise<ScaleRun> {
  const name = `scale_${rows}`;
  const { runDir, plan } = planFor(bench, name);
  // Local profiling reads only candidates inside its run directory, as a pipeline's own would be.
  const inputPath = path.join(runDir, 'candidates.jsonl');
  await writeDistinctRows(candidatesSource, inputPath, Math.ceil(rows / NUM_SAMPLES));
  const workflowId = `bench-${process.pid}-${name}`;
  const rssByPhase = new Map<string, number>();
  // When each phase was first seen, so the worker's own heap samples can be put in their phase.
  const phaseStarts: Array<{ t: number; phase: string }> = [];
  // The progress queries have their own connection without the client's retry interceptor: a
  // retry timer left behind by a query to a dead worker would otherwise fire on a closed channel.
  const connection = await Connection.connect({ address: bench.temporalAddress, interceptors: [] });
  const client = new Client({ connection });
  // Sampled, so a phase's figure can miss a short spike; the peak overall is the kernel's VmHWM.
  let sampling = Promise.resolve();
  let finished = false;
  const sample = async (worker: BenchWorker) => {
    // A query can fail while the workflow continues as new; the sample then counts for the last phase seen.
    let phase = 'starting';
    let done = 0;
    let lastReport = Date.now();
    for (let rss = worker.rssBytes(); !finished && rss > 0; rss = worker.rssBytes()) {
      rssByPhase.set(phase, Math.max(rssByPhase.get(phase) ?? 0, rss));
      if (Date.now() - lastReport >= PROGRESS_EVERY_MS) {
        lastReport = Date.now();
        console.log(
          `  ... ${name}: ${phase}, ${done}/${rows} rollouts, RSS ${Math.round(rss / MB)} MB, load ${loadNow()}`,
        );
      }
      await sleep(500);
      [phase, done] = await client
        .withDeadline(Date.now() + 2000, () => client.workflow.getHandle(workflowId).query(stageProgressQuery))
        .then(
          (p) => [p.stage.split(':')[1] ?? p.stage, p.done] as [string, number],
          () => [phase, done] as [string, number],
        );
      if (phaseStarts.at(-1)?.phase !== phase) phaseStarts.push({ t: Date.now(), phase });
    }
  };
  const loadBefore = loadNow();
  const before = { startupPeakRssBytes: 0, idleRssBeforeBytes: 0 };
  let stage: Promise<DurableStageRun> | undefined;
  try {
    const { value, peakRssBytes } = await withWorker(bench, async (taskQueue, worker) => {
      await sleep(IDLE_SETTLE_MS);
      before.idleRssBeforeBytes = worker.rssBytes();
      before.startupPeakRssBytes = worker.peakRssBytes();
      worker.resetPeakRss();
      sampling = sample(worker);
      stage = runDurableStage(bench.client, {
        taskQueue,
        workflowId,
        plan,
        stage: 'local_profile',
        inputPath,
        outPrefix: path.join(runDir, 'local_profile'),
        continueAsNewAfterEvents: CONTINUE_AS_NEW_AFTER_EVENTS,
      });
      const run = await stage;
      finished = true;
      await sampling;
      await sleep(IDLE_SETTLE_MS);
      return { run, idleRssAfterBytes: worker.rssBytes(), liveHeapByPhase: byPhase(worker.heapSamples(), phaseStarts) };
    });
    return {
      rows: value.run.result.materialize.rows,
      ...before,
      ...value,
      peakRssBytes,
      rssByPhase,
      loads: [loadBefore, loadNow()],
    };
  } catch (err) {
    // A worker that dies (out of memory, most likely) is a figure too: how far it got and how big it was.
    if (!(err instanceof WorkerExitedError)) throw err;
    finished = true;
    await sampling;
    // Nothing will run the workflow now: ended here, so the client's wait for its result settles
    // before the connection closes instead of retrying on a closed channel.
    await bench.client.workflow.getHandle(workflowId).terminate(`bench worker died: ${err.message}`);
    await stage?.catch(() => undefined);
    const lastPhase = phaseStarts.at(-1)?.phase ?? 'starting';
    return {
      rows,
      failure: `${err.message} (during ${lastPhase})`,
      ...before,
      peakRssBytes: Math.max(0, ...rssByPhase.values()),
      idleRssAfterBytes: 0,
      liveHeapByPhase: new Map(),
      rssByPhase,
      loads: [loadBefore, loadNow()],
    };
  } finally {
    finished = true;
    await sampling;
    await connection.close();
  }
}
