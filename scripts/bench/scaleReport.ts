import { NUM_SAMPLES } from './benchContext';
import type { DurableStageRun } from './collect';
import { CONTINUE_AS_NEW_AFTER_EVENTS, type ScaleRun } from './scale';

// The memory and history part of the bench's printout.

const MB = 1024 * 1024;
const MILLION = 1_000_000;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const byPhase = (m: Map<string, number>) =>
  [...m].map(([phase, bytes]) => `${phase} ${round(bytes / MB, 0)}`).join(', ');

export function scaleLines(s: ScaleRun, idleTargetMb: number): string[] {
  const head = `worker at ${s.rows} rows (local_profile, ${s.rows / NUM_SAMPLES} candidates x ${NUM_SAMPLES}; load ${s.loads[0]} -> ${s.loads[1]}): `;
  const idleBefore = `idle RSS before the run ${round(s.idleRssBeforeBytes / MB, 1)} MB (target < ${idleTargetMb})`;
  if (!s.run) {
    return [
      `${head}FAILED: ${s.failure}; highest sampled RSS ${round(s.peakRssBytes / MB, 1)} MB`,
      `  ${idleBefore}; sampled RSS by phase (MB): ${byPhase(s.rssByPhase)}`,
    ];
  }
  const heap = byPhase(s.liveHeapByPhase);
  const runs = s.run.historyEventsPerRun;
  return [
    `${head}peak RSS during the stage ${round(s.peakRssBytes / MB, 1)} MB (start-up peak ${round(s.startupPeakRssBytes / MB, 1)} MB), ` +
      `${round(s.rows / s.run.seconds, 1)} rollouts/s, ${runs.length} runs, max ${Math.max(...runs)} events per run`,
    `  ${idleBefore}, after it ${round(s.idleRssAfterBytes / MB, 1)} MB (= ${round(s.idleRssAfterBytes / s.idleRssBeforeBytes, 3)} x before); ` +
      `sampled RSS by phase (MB): ${byPhase(s.rssByPhase)}`,
    ...(heap ? [`  live main-thread heap after a forced GC, highest by phase (MB): ${heap}`] : []),
  ];
}

/** History per run is bounded by the continue-as-new threshold, not the input: a bigger input only adds runs. */
export function historyLines(rows: number, run: DurableStageRun, allRuns: number[], chunkSize: number): string[] {
  const chunks = run.result.materialize.chunks;
  const perRun = run.historyEventsPerRun;
  const events = perRun.reduce((a, b) => a + b, 0);
  const eventsPerChunk = events / chunks;
  const millionChunks = Math.ceil(MILLION / chunkSize);
  return [
    `history: ${rows} rows = ${chunks} chunks -> ${events} events over ${perRun.length} runs = ${round(eventsPerChunk, 2)} events/chunk, ` +
      `~${Math.round(chunks / perRun.length)} chunks per run at continue_as_new_after_events=${CONTINUE_AS_NEW_AFTER_EVENTS}`,
    `  1,000,000 rollouts / chunk_size ${chunkSize} = ${millionChunks} chunks x ${round(eventsPerChunk, 2)} events/chunk = ${Math.round(millionChunks * eventsPerChunk)} events ` +
      `/ ${CONTINUE_AS_NEW_AFTER_EVENTS} per run = ${Math.ceil((millionChunks * eventsPerChunk) / CONTINUE_AS_NEW_AFTER_EVENTS)} runs (max measured ${Math.max(...allRuns)} events per run, < 10,000)`,
  ];
}
