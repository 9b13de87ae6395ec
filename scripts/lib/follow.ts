import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { SingleBar, Presets } from 'cli-progress';
import { awaitDataset, getProgress, type PivotMiningResult } from '../../client';
import type { StageProgress } from '../../contracts/payloads';

// Follows a pivotMiningWorkflow until it ends, on stderr so stdout stays for results: one line per
// stage as it finishes, and on a terminal a live bar while a chunked stage runs (cleared when the
// stage's line is printed). A failed run rejects with the workflow's failure; the caller prints it.

interface SeenStage {
  stage: string;
  startedAt: number;
  chunks?: StageProgress;
}

/** The line printed when a stage ends: its name, its rollouts when it has chunks, and its wall time. */
export function stageLine(seen: SeenStage, endedAt: number): string {
  const seconds = `${((endedAt - seen.startedAt) / 1000).toFixed(1)} s`;
  const c = seen.chunks;
  const detail = c ? `${c.done}/${c.total} rollouts, ${c.failed} failed, ${c.rolloutsPerSecond}/s, ` : '';
  return `${seen.stage.padEnd(14)} ${detail}${seconds}`;
}

/** Turns polled progress into one line per finished stage; pure, so the output is testable. */
export class StageLines {
  private current: SeenStage | undefined;

  /** Records a poll; returns the line of the stage that just ended, if one did. */
  observe(stage: string, chunks: StageProgress | null, now: number): string | undefined {
    let ended: string | undefined;
    if (this.current?.stage !== stage) {
      if (this.current) ended = stageLine(this.current, now);
      this.current = stage === 'done' ? undefined : { stage, startedAt: now };
    }
    if (this.current && chunks) this.current.chunks = chunks;
    return ended;
  }

  /** The last stage's line once the run has ended. */
  finish(now: number): string | undefined {
    const line = this.current ? stageLine(this.current, now) : undefined;
    this.current = undefined;
    return line;
  }
}

export async function followRun(client: Client, workflowId: string, opts: { intervalMs?: number } = {}): Promise<PivotMiningResult> {
  const result = awaitDataset(client, workflowId);
  let outcome: 'running' | 'ok' | 'failed' = 'running';
  result.then(
    () => (outcome = 'ok'),
    () => (outcome = 'failed'),
  );
  const lines = new StageLines();
  let bar: SingleBar | undefined;
  const stopBar = () => {
    bar?.stop();
    bar = undefined;
  };
  while (outcome === 'running') {
    // A query can fail while the run is between tasks or just finished; the next poll retries.
    const progress = await getProgress(client, workflowId).catch(() => undefined);
    if (progress) {
      const chunks = progress.childStage ?? null;
      const ended = lines.observe(progress.stage, chunks, Date.now());
      if (ended) {
        stopBar();
        console.error(ended);
      }
      if (chunks && process.stderr.isTTY) {
        if (!bar) {
          bar = new SingleBar(
            { format: `${chunks.stage.padEnd(14)} [{bar}] {value}/{total} rollouts | {rate}/s | ETA {eta_formatted} | failed {failed}`, hideCursor: true, clearOnComplete: true, stream: process.stderr },
            Presets.shades_classic,
          );
          bar.start(Math.max(chunks.total, 1), chunks.done, { rate: chunks.rolloutsPerSecond, failed: chunks.failed });
        }
        bar.setTotal(Math.max(chunks.total, 1));
        bar.update(chunks.done, { rate: chunks.rolloutsPerSecond, failed: chunks.failed });
      }
    }
    await Promise.race([result.catch(() => undefined), sleep(opts.intervalMs ?? 500)]);
  }
  stopBar();
  const last = lines.finish(Date.now());
  if (last && outcome === 'ok') console.error(last);
  return result;
}
