import type { Command } from 'commander';
import { connectClient, awaitDataset, getProgress, type ActivityRetry, type EarlyProfiling } from '../../client';
import { followRun } from '../lib/follow';
import { printResult } from '../lib/printResult';
import { healthLine, readRunHealth } from '../../gym/health/stageHealth';

/** One line per rollout stage whose health checks ran: `health collect: 16 checked, ...; failed: ...`. */
export async function printHealth(runDir: string): Promise<void> {
  try {
    for (const [stage, h] of Object.entries(await readRunHealth(runDir))) console.log(`health ${healthLine(stage, h)}`);
  } catch (err) {
    console.error(`health: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** "waiting: mergeChunks of run/local_profile, attempt 3 in 12 s, after: <its last failure>". */
export function waitingLine(retry: ActivityRetry, now: Date): string {
  const seconds = retry.nextAttemptAt === null ? null : Math.max(0, Math.ceil((+retry.nextAttemptAt - +now) / 1000));
  const when = seconds === null ? 'running' : `in ${seconds} s`;
  return `waiting: ${retry.activityType} of ${retry.workflowId}, attempt ${retry.attempt} ${when}, after: ${retry.lastFailure}`;
}

/** "local_profile (early): 3 segments, 137 candidates, 512 samples done, 96/128 in running segments; collect chunks finished: 12". */
export function earlyLine(early: EarlyProfiling): string {
  return (
    `local_profile (early): ${early.segments} segments, ${early.candidates} candidates, ${early.samples} samples done, ` +
    `${early.runningDone}/${early.runningTotal} in running segments; collect chunks finished: ${early.collectChunksFinished}`
  );
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('show the stage and progress of a pivot mining run')
    .argument('<workflow-id>')
    .option('-f, --follow', 'follow with a live progress bar until the run ends')
    .action(async (workflowId: string, opts: { follow?: boolean }) => {
      const { client, close } = await connectClient();
      try {
        if (opts.follow) {
          const result = await followRun(client, workflowId);
          await printHealth(result.runDir);
          printResult(result);
          return;
        }
        const progress = await getProgress(client, workflowId);
        console.log(`${workflowId}: ${progress.status}`);
        if (progress.failure) console.log(`failure: ${progress.failure}`);
        if (progress.status === 'COMPLETED') {
          const result = await awaitDataset(client, workflowId);
          await printHealth(result.runDir);
          printResult(result);
          return;
        }
        if (progress.runDir) await printHealth(progress.runDir);
        if (progress.status !== 'RUNNING') return;
        console.log(`stage: ${progress.stage}  run dir: ${progress.runDir}`);
        const child = progress.childStage;
        if (child) {
          const eta = child.etaSeconds === null ? '?' : `${child.etaSeconds}s`;
          console.log(
            `${child.stage}: ${child.done}/${child.total} rollouts, ${child.failed} failed, ${child.rolloutsPerSecond}/s, ETA ${eta}`,
          );
        }
        if (progress.early) console.log(earlyLine(progress.early));
        for (const retry of progress.waiting) console.log(waitingLine(retry, new Date()));
        for (const [k, v] of Object.entries(progress.counts)) console.log(`  ${k}: ${v}`);
      } finally {
        await close();
      }
    });
}
