import type { Client } from '@temporalio/client';
import { SingleBar, Presets } from 'cli-progress';
import { followPivotMining, type MiningProgress, type PivotMiningResult } from '../../client';
import type { StageProgress } from '../../contracts/payloads';

// Follows a pivotMiningWorkflow until it ends, on stderr so stdout stays for results: one line per
// stage as it finishes, and on a terminal a live bar while a chunked stage runs (cleared when the
// stage's line is printed). A failed run rejects with the workflow's failure; the caller prints it.

/** The stages of pivotMiningWorkflow in order; a stage that ends between two polls still gets its line. */
const STAGES = ['prepare', 'collect', 'convert', 'local_profile', 'publish'] as const;
type Stage = (typeof STAGES)[number];

/** `, 10 over the pass-rate ceiling`: the filter rules that dropped mixed pivots, if any did. */
function ruleDrops(c: Record<string, number>): string {
  const rules: [string, string][] = [
    ['over_ceiling', 'over the pass-rate ceiling'],
    ['over_budget', 'over budget'],
    ['over_share', 'over their action-kind share'],
  ];
  return rules
    .filter(([key]) => (c[key] ?? 0) > 0)
    .map(([key, label]) => `, ${c[key]} ${label}`)
    .join('');
}

function summary(stage: Stage, c: Record<string, number>, rate: number | undefined): string {
  const perSecond = rate === undefined ? '' : `, ${Math.round(rate)}/s`;
  switch (stage) {
    case 'prepare':
      return 'config and inputs checked, servers up';
    case 'collect':
      return `${c.rollouts ?? '?'} rollouts of ${c.tasks ?? '?'} tasks, ${c.rollout_failures ?? 0} failed${perSecond}`;
    case 'convert':
      return `${c.candidates ?? '?'} candidates from ${c.positive_trajectories ?? '?'} positive trajectories (${c.deduped ?? 0} duplicates, ${c.skipped ?? 0} skipped)`;
    case 'local_profile':
      return `${c.local_profile_rollouts ?? '?'} samples, ${c.local_profile_failures ?? 0} failed${perSecond}`;
    case 'publish':
      return `${c.published ?? '?'} pivots published; dropped ${c.all_pass ?? '?'} all-pass, ${c.all_fail ?? '?'} all-fail${ruleDrops(c)}`;
  }
}

/** Turns polled progress into one line per finished stage; pure, so the output is testable. */
export class StageLines {
  private next = 0;
  private readonly rates = new Map<string, number>();

  constructor(private readonly startedAt: number) {}

  /** Records a poll; returns the lines of the stages that ended since the last one. */
  observe(stage: string, counts: Record<string, number>, chunks: StageProgress | null, now: number): string[] {
    if (chunks) this.rates.set(stage, chunks.rolloutsPerSecond);
    const at = stage === 'done' ? STAGES.length : STAGES.indexOf(stage as Stage);
    const lines: string[] = [];
    for (; this.next < at; this.next++) {
      const ended = STAGES[this.next]!;
      lines.push(
        `${ended.padEnd(14)} ${summary(ended, counts, this.rates.get(ended))}  [${((now - this.startedAt) / 1000).toFixed(1)} s]`,
      );
    }
    return lines;
  }
}

export async function followRun(
  client: Client,
  workflowId: string,
  opts: { intervalMs?: number } = {},
): Promise<PivotMiningResult> {
  const lines = new StageLines(Date.now());
  let bar: SingleBar | undefined;
  const stopBar = () => {
    bar?.stop();
    bar = undefined;
  };
  const onProgress = (progress: MiningProgress) => {
    const chunks = progress.childStage ?? null;
    const ended = lines.observe(progress.stage, progress.counts, chunks, Date.now());
    if (ended.length > 0) {
      stopBar();
      for (const line of ended) console.error(line);
    }
    if (chunks && process.stderr.isTTY) {
      if (!bar) {
        bar = new SingleBar(
          {
            format: `${chunks.stage.padEnd(14)} [{bar}] {value}/{total} rollouts | {rate}/s | ETA {eta_formatted} | failed {failed}`,
            hideCursor: true,
            clearOnComplete: true,
            stream: process.stderr,
          },
          Presets.shades_classic,
        );
        bar.start(Math.max(chunks.total, 1), chunks.done, { rate: chunks.rolloutsPerSecond, failed: chunks.failed });
      }
      bar.setTotal(Math.max(chunks.total, 1));
      bar.update(chunks.done, { rate: chunks.rolloutsPerSecond, failed: chunks.failed });
    }
  };
  const final = await followPivotMining(client, workflowId, onProgress, { intervalMs: opts.intervalMs ?? 500 }).finally(
    stopBar,
  );
  for (const line of lines.observe('done', final.counts, null, Date.now())) console.error(line);
  return final;
}
