import type { ThroughputResult } from './throughput';
import type { StageTimeline } from './timeline';

// The throughput section of the bench's printout: every durable figure beside the bare loop's, as a
// ratio, and the durable side's wall time split by what the Temporal server recorded.

const fix = (x: number, digits: number) => x.toFixed(digits);

function meanOf(timelines: StageTimeline[], pick: (t: StageTimeline) => number): number {
  return timelines.reduce((sum, t) => sum + pick(t), 0) / timelines.length;
}

export function throughputLines(tp: ThroughputResult, target: number): string[] {
  const rounds = tp.durable.timelines.length;
  const bareRound = tp.bare.seconds / rounds;
  const durableRound = tp.durable.seconds / rounds;
  const bareRate = tp.bare.rows / tp.bare.seconds;
  const durableRate = tp.durable.rows / tp.durable.seconds;
  const ratio = durableRate / bareRate;
  const u = (pick: (t: StageTimeline) => number) => meanOf(tp.durable.timelines, pick);
  const m = (pick: (t: StageTimeline) => number) => u(pick) / 1000;
  const row = (label: string, seconds: number, note = '') =>
    `    ${label.padEnd(44)} ${fix(seconds, 3).padStart(8)} s  ${fix(seconds / bareRound, 3).padStart(6)}${note ? `  ${note}` : ''}`;
  const historySpan = m((t) => t.totalMs);
  const lines = [
    `collect throughput at concurrency ${tp.concurrency}: ${rounds / 2} cycle(s) A B B A of ${tp.rowsPerRound} rollouts per round; load (1/5/15 min) at each cycle start and the end: ${tp.loads.join(' | ')}`,
    `  (a) bare undici loop (baseline)  ${fix(bareRate, 1)} rollouts/s, ${fix(bareRound, 3)} s per round`,
    `  (b) durable collect stage        ${fix(durableRate, 1)} rollouts/s, ${fix(durableRound, 3)} s per round`,
    `  durable / bare = ${fix(ratio, 3)} (target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'})`,
    `  where (b) spends a round, from the Temporal server's event times (mean of ${rounds} rounds)    seconds  x bare round`,
    row('bare loop, whole round (baseline)', bareRound),
    row('durable, client start -> result', durableRound),
    row('  workflow start -> materialize scheduled', m((t) => t.firstTaskMs)),
    row('  materialize: queue', m((t) => t.materialize.queueMs)),
    row('  materialize: run', m((t) => t.materialize.runMs)),
    row('  materialized -> first chunk scheduled', m((t) => t.toChunksMs)),
    row('  chunks: first scheduled -> last completed', m((t) => t.chunkSpanMs),
      `rate in this span / bare rate = ${fix(bareRound / m((t) => t.chunkSpanMs), 3)}`),
    `      ${u((t) => t.chunks)} chunks; per chunk: queue ${fix(u((t) => t.chunkQueueMeanMs), 1)} ms, run ${fix(m((t) => t.chunkRunMeanMs), 3)} s, ` +
      `completed -> replacement scheduled ${fix(u((t) => t.refillMeanMs), 1)} ms; mean chunks running ${fix(u((t) => t.meanChunksRunning), 2)}`,
    row('  continue-as-new gaps', m((t) => t.continueAsNewMs)),
    row('  last chunk -> merge scheduled', m((t) => t.toMergeMs)),
    row('  merge: queue', m((t) => t.merge.queueMs)),
    row('  merge: run', m((t) => t.merge.runMs)),
    row('  merged -> profile scheduled', m((t) => t.toProfileMs)),
    row('  profile: queue', m((t) => t.profile.queueMs)),
    row('  profile: run', m((t) => t.profile.runMs)),
    row('  profiled -> workflow completed', m((t) => t.closeMs)),
    row('  client: start RPC + result delivery', durableRound - historySpan),
    `  CPU seconds per 1000 rollouts, by process          durable   bare (baseline)   durable / bare`,
  ];
  const names = [...new Set([...Object.keys(tp.durable.cpu), ...Object.keys(tp.bare.cpu)])];
  const per1000 = (cpu: Record<string, number>, rows: number, name?: string) =>
    ((name ? cpu[name] ?? 0 : Object.values(cpu).reduce((a, b) => a + b, 0)) * 1000) / rows;
  for (const name of [...names, undefined]) {
    const d = per1000(tp.durable.cpu, tp.durable.rows, name);
    const b = per1000(tp.bare.cpu, tp.bare.rows, name);
    lines.push(`    ${(name ?? 'all processes').padEnd(44)} ${fix(d, 2).padStart(8)}   ${fix(b, 2).padStart(8)}   ${b > 0 ? fix(d / b, 3) : '-'}`);
  }
  return lines;
}
