import { FAULT_KINDS } from '../../contracts/faultsConfig';

// What a chaos run found, as a table for people and one JSON line for CI, and the verdict on it.

export interface ChaosReport {
  label: string;
  worker_kills: number;
  kills_by_stage: Record<string, number>;
  server_restarts: number;
  identical: boolean;
  differing: string[];
  files_compared: number;
  duplicate_keys: number;
  missing_keys: number;
  faults_injected: Record<string, Record<string, number>>;
  failure_lines: number;
  failure_lines_by_class: Record<string, number>;
  unexplained_failure_lines: number;
  faults_lost_with_killed_workers: number;
  exhausted_keys: number;
  chunk_activity_retries: number;
  unexpected_worker_exits: number;
  wall_seconds: { undisturbed: number; chaos: number };
  rollouts: number;
  local_profile_rollouts: number;
  published: number;
  work_dir: string;
}

export function formatReport(r: ChaosReport): string {
  const rows: Array<[string, string]> = [];
  for (const server of Object.keys(r.faults_injected).sort()) {
    for (const kind of FAULT_KINDS)
      rows.push([`faults injected: ${server} ${kind}`, String(r.faults_injected[server]![kind] ?? 0)]);
  }
  for (const [cls, n] of Object.entries(r.failure_lines_by_class).sort())
    rows.push([`request retries (failure lines): ${cls}`, String(n)]);
  rows.push(
    ['request retries (failure lines): total', String(r.failure_lines)],
    ['failure lines without an injected fault', String(r.unexplained_failure_lines)],
    ['injected faults lost with a killed worker', String(r.faults_lost_with_killed_workers)],
    ['keys out of attempts', String(r.exhausted_keys)],
    ['chunk activity retries (Temporal)', String(r.chunk_activity_retries)],
    [
      'worker SIGKILLs (collect / local_profile)',
      `${r.worker_kills} (${r.kills_by_stage.collect} / ${r.kills_by_stage.local_profile})`,
    ],
    ['workers that exited on their own', String(r.unexpected_worker_exits)],
    ['Temporal server restarts', String(r.server_restarts)],
    [
      'rollouts / local-profile rollouts / published pivots',
      `${r.rollouts} / ${r.local_profile_rollouts} / ${r.published}`,
    ],
    [
      'wall time undisturbed → chaos (s)',
      `${r.wall_seconds.undisturbed.toFixed(1)} → ${r.wall_seconds.chaos.toFixed(1)}`,
    ],
    [
      'artifacts identical to undisturbed (files)',
      `${r.identical} (${r.files_compared})${r.differing.length ? `: ${r.differing.join(', ')}` : ''}`,
    ],
    ['duplicate / missing rollout keys', `${r.duplicate_keys} / ${r.missing_keys}`],
  );
  const width = Math.max(...rows.map(([k]) => k.length));
  const summary = {
    label: r.label,
    worker_kills: r.worker_kills,
    server_restarts: r.server_restarts,
    identical: r.identical,
    duplicate_keys: r.duplicate_keys,
    missing_keys: r.missing_keys,
    faults_injected: Object.values(r.faults_injected).reduce(
      (n, kinds) => n + Object.values(kinds).reduce((a, b) => a + b, 0),
      0,
    ),
    failure_lines: r.failure_lines,
    unexplained_failure_lines: r.unexplained_failure_lines,
    exhausted_keys: r.exhausted_keys,
    wall_seconds: r.wall_seconds,
  };
  return [`chaos run (${r.label})`, ...rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`), JSON.stringify(summary)].join(
    '\n',
  );
}

/** True when the run proved what it must: same artifacts, exact keys, a sidecar we can explain. */
export function chaosPassed(r: ChaosReport): boolean {
  return (
    r.identical &&
    r.duplicate_keys === 0 &&
    r.missing_keys === 0 &&
    r.unexplained_failure_lines === 0 &&
    r.exhausted_keys === 0
  );
}
