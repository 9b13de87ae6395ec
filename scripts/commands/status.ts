import type { Command } from 'commander';
import type { PivotMiningProgress, PivotMiningResult, StageProgress } from '../../workflows/types';
import { connectClient } from '../lib/client';
import { followRun } from '../lib/follow';
import { printResult } from '../lib/printResult';

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
          printResult(await followRun(client, workflowId));
          return;
        }
        const handle = client.workflow.getHandle(workflowId);
        const description = await handle.describe();
        console.log(`${workflowId}: ${description.status.name}`);
        if (description.status.name === 'COMPLETED') {
          printResult((await handle.result()) as PivotMiningResult);
          return;
        }
        if (description.status.name !== 'RUNNING') return;
        const progress = await handle.query<PivotMiningProgress>('progress');
        console.log(`stage: ${progress.stage}  run dir: ${progress.runDir}`);
        if (progress.childWorkflowId) {
          const child = await client.workflow.getHandle(progress.childWorkflowId).query<StageProgress>('progress');
          const eta = child.etaSeconds === null ? '?' : `${child.etaSeconds}s`;
          console.log(`${child.stage}: ${child.done}/${child.total} rollouts, ${child.failed} failed, ${child.rolloutsPerSecond}/s, ETA ${eta}`);
        }
        for (const [k, v] of Object.entries(progress.counts)) console.log(`  ${k}: ${v}`);
      } finally {
        await close();
      }
    });
}
