// The pure half of the peer bench (scripts/bench/peer.ts): per-round figures, the medians and
// ratios of ours (pivot-miner's collect stage, side B) over NeMo Gym's `ng_collect_rollouts` (side
// A), the reward comparison, and the closing JSON line. No processes, no clocks: the bench measures,
// these functions only count, so the test can check them on made-up rounds.

export type PeerSide = 'A' | 'B';

export interface PeerRound {
  side: PeerSide;
  /** 1-based among the counted rounds; 0 for a warm-up round. */
  index: number;
  rollouts: number;
  /** Materialize → aggregate metrics written, as the bench measured it for this side. */
  stageSeconds: number;
  /** CPU seconds of the collector's processes over the stage: A `ng_collect_rollouts`; B `worker` and `temporal`. */
  collectorCpu: Record<string, number>;
  /** CPU seconds of the servers over the stage, by server (ng_run's processes and the simulator). */
  serversCpu: Record<string, number>;
  /** /proc/loadavg's three figures when the round ended. */
  load: string;
  /** What else the side's round says (A: its Python start-up; B: its client-side seconds). */
  note?: string;
}

export const sum = (values: Iterable<number>): number => {
  let total = 0;
  for (const v of values) total += v;
  return total;
};

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const rateOf = (r: PeerRound): number => r.rollouts / r.stageSeconds;

/** CPU milliseconds per rollout of the named processes (all of them when `names` is omitted). */
export function cpuMsPerRollout(cpu: Record<string, number>, rollouts: number, names?: readonly string[]): number {
  const picked = names ? names.map((n) => cpu[n] ?? 0) : Object.values(cpu);
  return (1000 * sum(picked)) / rollouts;
}

/** Ours over NeMo Gym's per-rollout collector CPU: B's worker alone, and B's worker + Temporal server. */
export const workerCpuMs = (b: PeerRound): number => cpuMsPerRollout(b.collectorCpu, b.rollouts, ['worker']);
export const collectorCpuMs = (r: PeerRound): number => cpuMsPerRollout(r.collectorCpu, r.rollouts);
export const serversCpuMs = (r: PeerRound): number => cpuMsPerRollout(r.serversCpu, r.rollouts);

/**
 * The counted rounds as A/B pairs in the order they ran: A B B A gives (A1, B1) and (A2, B2), so each
 * pair's two rounds ran back to back and a drift of the host's load weighs on both of a pair alike.
 */
export function pairsOf(rounds: readonly PeerRound[]): Array<{ a: PeerRound; b: PeerRound }> {
  const counted = rounds.filter((r) => r.index > 0);
  if (counted.length % 2 !== 0) throw new Error(`${counted.length} counted rounds do not make pairs`);
  const pairs: Array<{ a: PeerRound; b: PeerRound }> = [];
  for (let i = 0; i < counted.length; i += 2) {
    const [x, y] = [counted[i]!, counted[i + 1]!];
    if (x.side === y.side)
      throw new Error(`rounds ${x.index} and ${y.index} are both side ${x.side}; a pair is one A and one B`);
    pairs.push(x.side === 'A' ? { a: x, b: y } : { a: y, b: x });
  }
  return pairs;
}

export interface PeerSummary {
  pairs: number;
  /** Medians of each side's counted rounds. */
  a: { rate: number; collectorCpuMs: number; serversCpuMs: number };
  b: { rate: number; workerCpuMs: number; temporalCpuMs: number; collectorCpuMs: number; serversCpuMs: number };
  /** Ours / NeMo Gym's: the median of the pairs' own ratios. */
  throughputRatio: number;
  workerCpuRatio: number;
  collectorCpuRatio: number;
  serversCpuRatio: number;
}

export function summarize(rounds: readonly PeerRound[]): PeerSummary {
  const pairs = pairsOf(rounds);
  const as = pairs.map((p) => p.a);
  const bs = pairs.map((p) => p.b);
  const ratio = (of: (p: { a: PeerRound; b: PeerRound }) => number) => median(pairs.map(of));
  return {
    pairs: pairs.length,
    a: {
      rate: median(as.map(rateOf)),
      collectorCpuMs: median(as.map(collectorCpuMs)),
      serversCpuMs: median(as.map(serversCpuMs)),
    },
    b: {
      rate: median(bs.map(rateOf)),
      workerCpuMs: median(bs.map(workerCpuMs)),
      temporalCpuMs: median(bs.map((b) => cpuMsPerRollout(b.collectorCpu, b.rollouts, ['temporal']))),
      collectorCpuMs: median(bs.map(collectorCpuMs)),
      serversCpuMs: median(bs.map(serversCpuMs)),
    },
    throughputRatio: ratio((p) => rateOf(p.b) / rateOf(p.a)),
    workerCpuRatio: ratio((p) => workerCpuMs(p.b) / collectorCpuMs(p.a)),
    collectorCpuRatio: ratio((p) => collectorCpuMs(p.b) / collectorCpuMs(p.a)),
    serversCpuRatio: ratio((p) => serversCpuMs(p.b) / serversCpuMs(p.a)),
  };
}

const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : String(x));
const perProcess = (cpu: Record<string, number>, rollouts: number) =>
  Object.entries(cpu)
    .filter(([, s]) => s > 0)
    .sort((x, y) => y[1] - x[1])
    .map(([name, s]) => `${name} ${fixed((1000 * s) / rollouts, 2)}`)
    .join(', ');

/** One line per round: its rate, the collector's and the servers' CPU per rollout, split by process. */
export function roundLine(r: PeerRound): string {
  const who = r.side === 'A' ? 'A ng_collect_rollouts' : 'B pivot-miner collect (attach)';
  const label = r.index === 0 ? 'warm-up' : `round ${r.index}`;
  return (
    `${label} ${who}: ${r.rollouts} rollouts, stage ${fixed(r.stageSeconds, 2)} s = ${fixed(rateOf(r), 1)} rollouts/s; ` +
    `collector ${fixed(collectorCpuMs(r), 2)} CPU-ms/rollout (${perProcess(r.collectorCpu, r.rollouts)}); ` +
    `servers ${fixed(serversCpuMs(r), 2)} CPU-ms/rollout (${perProcess(r.serversCpu, r.rollouts)}); load ${r.load}` +
    (r.note ? `; ${r.note}` : '')
  );
}

export function summaryLines(s: PeerSummary): string[] {
  return [
    `medians over ${s.pairs} A/B pairs (ratios: the median of each pair's own ratio, ours / NeMo Gym's):`,
    `  rollouts/s, stage:            A ${fixed(s.a.rate, 1)}  B ${fixed(s.b.rate, 1)}  B/A ${fixed(s.throughputRatio, 3)} (goal >= 1.0)`,
    `  collector CPU-ms/rollout:     A ${fixed(s.a.collectorCpuMs, 2)}  B ${fixed(s.b.collectorCpuMs, 2)} ` +
      `(worker ${fixed(s.b.workerCpuMs, 2)} + Temporal dev server ${fixed(s.b.temporalCpuMs, 2)})`,
    `    worker / ng_collect_rollouts ${fixed(s.workerCpuRatio, 3)} (goal <= 1.0); worker + Temporal / ng_collect_rollouts ${fixed(s.collectorCpuRatio, 3)} (goal <= 1.5)`,
    `  servers CPU-ms/rollout:       A ${fixed(s.a.serversCpuMs, 2)}  B ${fixed(s.b.serversCpuMs, 2)}  B/A ${fixed(s.serversCpuRatio, 3)}`,
  ];
}

const round3 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);

/** The closing line, one JSON object, so runs can be compared. */
export function peerJsonLine(s: PeerSummary, rewardsEqual: boolean, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    bench: 'peer',
    throughput_ratio: round3(s.throughputRatio),
    worker_cpu_ratio: round3(s.workerCpuRatio),
    collector_cpu_ratio: round3(s.collectorCpuRatio),
    rewards_equal: rewardsEqual,
    ...extra,
  });
}

/** Reward of each rollout by `<_ng_task_index>:<_ng_rollout_index>`, from a rollouts JSONL's lines. */
export function rewardsByKey(lines: Iterable<string>): Map<string, number> {
  const rewards = new Map<string, number>();
  for (const line of lines) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { _ng_task_index?: unknown; _ng_rollout_index?: unknown; reward?: unknown };
    const key = `${String(row._ng_task_index)}:${String(row._ng_rollout_index)}`;
    if (rewards.has(key)) throw new Error(`rollout ${key} appears twice`);
    if (typeof row.reward !== 'number') throw new Error(`rollout ${key} has no numeric reward`);
    rewards.set(key, row.reward);
  }
  return rewards;
}

export interface RewardComparison {
  equal: boolean;
  keys: number;
  /** Keys of the reference the other lacks, keys the other has beyond it, keys whose reward differs: a few of each. */
  missing: string[];
  extra: string[];
  differing: string[];
}

/** Whether `other` has exactly the reference's keys, each with the same reward. */
export function compareRewards(
  reference: ReadonlyMap<string, number>,
  other: ReadonlyMap<string, number>,
  show = 5,
): RewardComparison {
  const missing: string[] = [];
  const differing: string[] = [];
  for (const [key, reward] of reference) {
    const theirs = other.get(key);
    if (theirs === undefined) missing.push(key);
    else if (theirs !== reward) differing.push(`${key} (${reward} vs ${theirs})`);
  }
  const extra = [...other.keys()].filter((key) => !reference.has(key));
  const equal = missing.length === 0 && extra.length === 0 && differing.length === 0;
  return {
    equal,
    keys: reference.size,
    missing: missing.slice(0, show),
    extra: extra.slice(0, show),
    differing: differing.slice(0, show),
  };
}
