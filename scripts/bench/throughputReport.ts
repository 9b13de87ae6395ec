import type { SideMeasure, ThroughputResult } from './throughput';
import type { StageTimeline } from './timeline';

// The throughput section of the bench's printout: every durable figure beside the bare loop's, as a
// ratio, and the durable side's wall time split by what the Temporal server recorded.

const fix = (x: number, digits: number) => x.toFixed(digits);

function meanOf(timelines: StageTimeline[], pick: (t: StageTimeline) => number): number {
  return timelines.reduce((sum, t) => sum + pick(t), 0) / timelines.length;
}

/** Mean seconds of a round's serial activities, materialize and finish. */
function serialOf(timelines: StageTimeline[]): number {
  return meanOf(timelines, (t) => t.materialize.runMs + t.finish.runMs) / 1000;
}

/** Rollouts per second over a side's summed rounds. */
export const rateOf = (side: SideMeasure) => side.rows / side.seconds;

/** CPU seconds of one process per rollout of a side. */
const cpuPerRollout = (side: SideMeasure, name: string) => (side.cpu[name] ?? NaN) / side.rows;

/** The headline: the durable stage's rollouts per second over the bare loop's, both writing the same files. */
export function durableOverBare(tp: { bare: SideMeasure; durable: SideMeasure }): number {
  return rateOf(tp.durable) / rateOf(tp.bare);
}

/**
 * The headline with the bare loop's tail (aggregate metrics and reward profile) left out of its
 * time: how the bench compared the sides before the bare loop wrote those files, which charged
 * the durable stage for work that is not orchestration. Printed beside the headline, never for it.
 */
export function durableOverBareRolloutsAlone(tp: {
  bare: SideMeasure & { tailSeconds: number };
  durable: SideMeasure;
}): number {
  return rateOf(tp.durable) / (tp.bare.rows / (tp.bare.seconds - tp.bare.tailSeconds));
}

/**
 * The headline had the simulators spent the same CPU per rollout on both sides. They are the
 * bottleneck (one process, a core to itself), so the rate follows their CPU per rollout, and the
 * host moves that by up to a fifth between rounds of the same requests, as much with the bare loop
 * alone (6.5-9.6 ms a rollout) as with a busy process beside it: scaling by their CPU ratio
 * durable/bare takes that out, so runs that differ only by it agree. An estimate beside the
 * target, never the target: it also takes out whatever the durable side itself costs the
 * simulators (a few per cent on average on the 2-core bench machine), so it reads that much high.
 */
export function durableOverBareSimulatorsEqual(tp: { bare: SideMeasure; durable: SideMeasure }): number {
  return durableOverBare(tp) * (cpuPerRollout(tp.durable, 'simulators') / cpuPerRollout(tp.bare, 'simulators'));
}

/**
 * The third side (--without-temporal), the stage's activities without Temporal: its rate over the
 * bare loop's is what the stage's own work costs, the durable rate over its rate what Temporal adds.
 */
export function withoutTemporalRatios(tp: {
  bare: SideMeasure;
  durable: SideMeasure;
  inProcess?: SideMeasure;
}): { stageOverBare: number; durableOverStage: number } | undefined {
  if (!tp.inProcess) return undefined;
  return {
    stageOverBare: rateOf(tp.inProcess) / rateOf(tp.bare),
    durableOverStage: rateOf(tp.durable) / rateOf(tp.inProcess),
  };
}

function inProcessLines(tp: ThroughputResult): string[] {
  const side = tp.inProcess;
  const ratios = withoutTemporalRatios(tp);
  if (!side || !ratios) return [];
  const rounds = tp.durable.timelines.length;
  return [
    `  (c) the stage's activities in the bench process, no Temporal (--without-temporal)  ${fix(rateOf(side), 1)} rollouts/s, ${fix(side.seconds / rounds, 3)} s per round`,
    `      (c) / bare = ${fix(ratios.stageOverBare, 3)} (the stage's own work); durable / (c) = ${fix(ratios.durableOverStage, 3)} (what Temporal adds)`,
    `      (c) per round: serial activities (materialize + finish) ${fix(side.serialSeconds / rounds, 3)} s; ` +
      `chunk span ${fix(side.chunkSpanSeconds / rounds, 3)} s, its rate / bare rate = ${fix(tp.bare.seconds / side.chunkSpanSeconds, 3)}; ` +
      `simulators' CPU per rollout / bare's = ${fix(cpuPerRollout(side, 'simulators') / cpuPerRollout(tp.bare, 'simulators'), 3)}`,
  ];
}

export function throughputLines(tp: ThroughputResult, target: number): string[] {
  const rounds = tp.durable.timelines.length;
  const bareRound = tp.bare.seconds / rounds;
  const durableRound = tp.durable.seconds / rounds;
  const ratio = durableOverBare(tp);
  const u = (pick: (t: StageTimeline) => number) => meanOf(tp.durable.timelines, pick);
  const m = (pick: (t: StageTimeline) => number) => u(pick) / 1000;
  const worst = (pick: (t: StageTimeline) => number) => Math.max(...tp.durable.timelines.map(pick)) / 1000;
  const row = (label: string, seconds: number, note = '') =>
    `    ${label.padEnd(52)} ${fix(seconds, 3).padStart(8)} s  ${fix(seconds / bareRound, 3).padStart(6)}${note ? `  ${note}` : ''}`;
  // A phase of the history: its mean, its ratio to the bare round and the worst round.
  const phase = (label: string, pick: (t: StageTimeline) => number, note = '') =>
    row(label, m(pick), `max ${fix(worst(pick), 3)} s${note ? `; ${note}` : ''}`);
  const historySpan = m((t) => t.totalMs);
  const serial = serialOf(tp.durable.timelines);
  const handoffs = durableRound - serial - m((t) => t.chunkSpanMs);
  const lines = [
    `collect throughput at concurrency ${tp.concurrency}: ${rounds / 2} cycle(s) ${tp.inProcess ? 'A B C C B A' : 'A B B A'} of ${tp.rowsPerRound} rollouts per round; load (1/5/15 min) at each cycle start and the end: ${tp.loads.join(' | ')}`,
    `  (a) bare undici loop (baseline)  ${fix(rateOf(tp.bare), 1)} rollouts/s, ${fix(bareRound, 3)} s per round, ` +
      `of which ${fix(tp.bare.tailSeconds / rounds, 3)} s aggregate metrics + reward profile after the last rollout (the stage's files)`,
    `  (b) durable collect stage        ${fix(rateOf(tp.durable), 1)} rollouts/s, ${fix(durableRound, 3)} s per round`,
    `  durable / bare = ${fix(ratio, 3)} (target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'})`,
    `  durable / bare's rollouts alone (its tail left out, as the bench compared them before the bare loop wrote the stage's files) = ${fix(durableOverBareRolloutsAlone(tp), 3)}`,
    `  estimate, not the target: durable / bare had the simulators (the bottleneck) spent the same CPU per rollout on both sides = ${fix(durableOverBareSimulatorsEqual(tp), 3)}`,
    ...inProcessLines(tp),
    `  where (b) spends a round, from the Temporal server's event times (mean of ${rounds} rounds)    seconds  x bare round`,
    row('bare loop, whole round (baseline)', bareRound),
    row('durable, client start -> result', durableRound),
    phase('  workflow start -> materialize scheduled', (t) => t.firstTaskMs),
    phase('  materialize: queue', (t) => t.materialize.queueMs),
    phase('  materialize: run', (t) => t.materialize.runMs),
    phase('  materialized -> first chunk scheduled', (t) => t.toChunksMs),
    phase(
      '  chunks: first scheduled -> last completed',
      (t) => t.chunkSpanMs,
      `rate in this span / bare rate = ${fix(bareRound / m((t) => t.chunkSpanMs), 3)}`,
    ),
    `      ${u((t) => t.chunks)} chunks; per chunk: queue ${fix(
      u((t) => t.chunkQueueMeanMs),
      1,
    )} ms, run ${fix(
      m((t) => t.chunkRunMeanMs),
      3,
    )} s, ` +
      `completed -> replacement scheduled ${fix(
        u((t) => t.refillMeanMs),
        1,
      )} ms; mean chunks running ${fix(
        u((t) => t.meanChunksRunning),
        2,
      )}`,
    `      ${u((t) => t.chunkMerges)} merges of finished chunks during the span, ${fix(
      m((t) => t.chunkMergesRunMs),
      3,
    )} s running in all`,
    phase('  continue-as-new gaps', (t) => t.continueAsNewMs),
    phase('  last chunk -> finish scheduled', (t) => t.toFinishMs),
    phase('  finish: queue', (t) => t.finish.queueMs),
    phase('  finish (merge rest; profile + aggregate metrics): run', (t) => t.finish.runMs),
    phase('  finished -> workflow completed', (t) => t.closeMs),
    `      warm-up rounds (uncounted, first first), materialize + finish runs: ${tp.durable.warmupTimelines
      .map((t) => `${fix(serialOf([t]), 3)} s`)
      .join(', ')}; counted rounds' mean ${fix(serial, 3)} s`,
    row('  client: start RPC + result delivery', durableRound - historySpan),
    `      workflow tasks outside the chunk span: ${fix(
      u((t) => t.serialWorkflowTasks.count),
      1,
    )} a round, each ` +
      `${fix(
        u((t) => t.serialWorkflowTasks.dispatchMeanMs),
        1,
      )} ms scheduled -> taken by the worker + ` +
      `${fix(
        u((t) => t.serialWorkflowTasks.runMeanMs),
        1,
      )} ms taken -> completed (means)`,
    `  beyond the bare loop: ${fix(durableRound - bareRound, 3)} s per round = ` +
      `serial activities ${fix(serial, 3)} s (materialize + finish runs) + ` +
      `hand-offs ${fix(handoffs, 3)} s (workflow tasks, activity queues, client) + ` +
      `chunk span minus bare round ${fix(m((t) => t.chunkSpanMs) - bareRound, 3)} s`,
    `  CPU seconds per 1000 rollouts, by process          durable   bare (baseline)   durable / bare${tp.inProcess ? '   (c) no Temporal' : ''}`,
  ];
  const names = [...new Set([...Object.keys(tp.durable.cpu), ...Object.keys(tp.bare.cpu)])];
  const per1000 = (cpu: Record<string, number>, rows: number, name?: string) =>
    ((name ? (cpu[name] ?? 0) : Object.values(cpu).reduce((a, b) => a + b, 0)) * 1000) / rows;
  for (const name of [...names, undefined]) {
    const d = per1000(tp.durable.cpu, tp.durable.rows, name);
    const b = per1000(tp.bare.cpu, tp.bare.rows, name);
    const ratioText = b > 0 ? fix(d / b, 3) : '-';
    const c = tp.inProcess
      ? `${ratioText.padEnd(14)}${fix(per1000(tp.inProcess.cpu, tp.inProcess.rows, name), 2).padStart(14)}`
      : ratioText;
    lines.push(
      `    ${(name ?? 'all processes').padEnd(44)} ${fix(d, 2).padStart(8)}   ${fix(b, 2).padStart(8)}   ${c}`,
    );
  }
  // On a machine whose CPUs are all busy, rate follows CPU per rollout: this says which phase pays.
  const bareAll = per1000(tp.bare.cpu, tp.bare.rows);
  lines.push(
    `  durable CPU seconds per 1000 rollouts by phase (Temporal event windows, 100 ms samples); x = share of the bare loop's ${fix(bareAll, 2)} (all processes)`,
  );
  lines.push(
    `    ${'phase'.padEnd(14)}${names.map((n) => n.padStart(12)).join('')}${'all'.padStart(12)}${'x bare'.padStart(9)}`,
  );
  for (const [phaseName, cpu] of Object.entries(tp.durable.cpuByPhase)) {
    const all = per1000(cpu, tp.durable.rows);
    lines.push(
      `    ${phaseName.padEnd(14)}${names.map((n) => fix(per1000(cpu, tp.durable.rows, n), 2).padStart(12)).join('')}${fix(all, 2).padStart(12)}${fix(all / bareAll, 3).padStart(9)}`,
    );
  }
  return lines;
}
