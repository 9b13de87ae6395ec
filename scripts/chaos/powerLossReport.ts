// What a power-loss run found: a table for people, the one JSON line CI reads last, and the verdict.

export interface CutRecord {
  stage: string;
  what: string;
  /** The operation the filesystem froze at, "<op> <path>"; absent when the point was never reached. */
  at?: string;
}

export interface DiskFullRecord {
  recovered: boolean;
  identical: boolean;
  differing: string[];
  enospc: number;
  eio: number;
  /** Activity failures seen while the disk was full, with their attempt numbers. */
  failures: string[];
  /** Files published before the disk filled that changed while it was full: must be none. */
  published_changed: string[];
}

const DISK_ERROR = /\b(ENOSPC|EIO)\b/;
/** "<absolute path>: ENOSPC…" or "…, open '<absolute path>'": the error names the file it failed on. */
const NAMES_A_FILE = /(\/[^\s:']+: (ENOSPC|EIO)\b)|((ENOSPC|EIO)\b[^']*'\/[^']+')/;

/** Disk errors among the failures whose message does not say which file they hit: must be none. */
export function unnamedDiskErrors(failures: readonly string[]): string[] {
  return failures.filter((f) => DISK_ERROR.test(f) && !NAMES_A_FILE.test(f));
}

export interface PowerLossReport {
  label: string;
  cuts: CutRecord[];
  missed: CutRecord[];
  finished: boolean;
  outcome: string;
  identical: boolean;
  differing: string[];
  duplicate_keys: number;
  missing_keys: number;
  unexpected_worker_exits: number;
  wall_seconds: { undisturbed: number; power_loss: number; disk_full?: number };
  disk_full?: DiskFullRecord;
  work_dir: string;
}

export function formatPowerLossReport(r: PowerLossReport): string {
  const lines = [`power-loss run (${r.label})`];
  r.cuts.forEach((c, i) => lines.push(`cut ${String(i + 1).padStart(2)}  ${c.stage} / ${c.what}: ${c.at}`));
  for (const c of r.missed) lines.push(`not reached  ${c.stage} / ${c.what}`);
  lines.push(
    `outcome: ${r.outcome}`,
    `artifacts identical to undisturbed: ${r.identical}${r.differing.length ? ` (${r.differing.join(', ')})` : ''}`,
    `duplicate / missing rollout keys: ${r.duplicate_keys} / ${r.missing_keys}`,
    `workers that exited on their own: ${r.unexpected_worker_exits}`,
    `wall time (s): undisturbed ${r.wall_seconds.undisturbed.toFixed(1)}, power loss ${r.wall_seconds.power_loss.toFixed(1)}` +
      (r.wall_seconds.disk_full === undefined ? '' : `, disk full ${r.wall_seconds.disk_full.toFixed(1)}`),
  );
  const d = r.disk_full;
  if (d) {
    lines.push(
      `disk full: ${d.enospc} ENOSPC, ${d.eio} EIO; recovered ${d.recovered}, identical ${d.identical}` +
        (d.differing.length ? ` (${d.differing.join(', ')})` : ''),
      `disk full: published files changed while full: ${d.published_changed.length ? d.published_changed.join(', ') : 'none'}`,
      `disk full: errors that name no file: ${unnamedDiskErrors(d.failures).length}`,
      ...d.failures.map((f) => `disk full: activity failure: ${f}`),
    );
  }
  const summary: Record<string, unknown> = {
    power_loss: {
      cuts: r.cuts.length,
      identical: r.identical,
      duplicate_keys: r.duplicate_keys,
      missing_keys: r.missing_keys,
    },
  };
  if (d) summary.disk_full = { recovered: d.recovered, identical: d.identical };
  lines.push(JSON.stringify(summary));
  return lines.join('\n');
}

export function powerLossPassed(r: PowerLossReport, minCuts: number): boolean {
  const d = r.disk_full;
  const diskFullPassed =
    !d ||
    (d.recovered &&
      d.identical &&
      d.published_changed.length === 0 &&
      d.failures.some((f) => DISK_ERROR.test(f)) &&
      unnamedDiskErrors(d.failures).length === 0);
  return r.cuts.length >= minCuts && r.identical && r.duplicate_keys === 0 && r.missing_keys === 0 && diskFullPassed;
}
