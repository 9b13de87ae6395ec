import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { SingleBar, Presets } from 'cli-progress';
import { awaitDataset, getProgress, type PivotMiningResult } from '../../client';

// Follows a pivotMiningWorkflow until it ends: a live bar for the chunked stages on a terminal,
// plain progress lines otherwise (CI logs), all on stderr so stdout stays for results.

export async function followRun(client: Client, workflowId: string, opts: { intervalMs?: number } = {}): Promise<PivotMiningResult> {
  const result = awaitDataset(client, workflowId);
  let settled = false;
  result.then(
    () => (settled = true),
    () => (settled = true),
  );
  const tty = process.stderr.isTTY;
  let bar: SingleBar | undefined;
  let barStage = '';
  let lastLine = '';
  let lastPrint = 0;
  while (!settled) {
    // A query can fail while the run is between tasks or just finished; the next poll retries.
    const progress = await getProgress(client, workflowId).catch(() => undefined);
    const child = progress?.childStage ?? undefined;
    if (progress) {
      if (child && tty) {
        if (barStage !== child.stage) {
          bar?.stop();
          bar = new SingleBar(
            { format: `${child.stage.padEnd(24)} [{bar}] {value}/{total} rollouts | {rate}/s | ETA {eta_formatted} | failed {failed}`, hideCursor: true, stream: process.stderr },
            Presets.shades_classic,
          );
          bar.start(Math.max(child.total, 1), child.done, { rate: child.rolloutsPerSecond, failed: child.failed });
          barStage = child.stage;
        }
        bar?.setTotal(Math.max(child.total, 1));
        bar?.update(child.done, { rate: child.rolloutsPerSecond, failed: child.failed });
      } else {
        if (bar) {
          bar.stop();
          bar = undefined;
          barStage = '';
        }
        const line = child
          ? `[${progress.stage}] ${child.stage}: ${child.done}/${child.total} rollouts, ${child.failed} failed, ${child.rolloutsPerSecond}/s`
          : `[${progress.stage}]`;
        if (line !== lastLine && (Date.now() - lastPrint > 2000 || !line.startsWith(lastLine.split(']')[0]!))) {
          console.error(line);
          lastLine = line;
          lastPrint = Date.now();
        }
      }
    }
    await Promise.race([result.catch(() => undefined), sleep(opts.intervalMs ?? 500)]);
  }
  bar?.stop();
  return result;
}
