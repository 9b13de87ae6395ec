import type { Command } from 'commander';
import { closePools } from '../../activities/http/client';
import { connectClient, startPivotMining } from '../../client';
import { TASK_QUEUE } from '../../workers/connection';
import { followRun } from '../lib/follow';
import { checkRun, pivotMiningWorkflowId, reportFindings } from '../lib/preflight';
import { printResult } from '../lib/printResult';

interface RunOptions {
  config: string;
  runId?: string;
  seed?: number;
  workflowId?: string;
  follow: boolean;
  check: boolean;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('start pivotMiningWorkflow for a pipeline config and follow it until the dataset is published')
    .requiredOption(
      '-c, --config <file>',
      'pipeline config YAML (path as the worker sees it, relative to its working directory)',
    )
    .option('--run-id <id>', 'run directory name; re-using one resumes that run')
    .option('--seed <n>', 'override the config seed', (v) => Number.parseInt(v, 10))
    .option('--workflow-id <id>', 'Temporal workflow id (default: pivot-mining-<run id or time>)')
    .option('--no-follow', 'print the workflow id and return at once')
    .option('--no-check', "start without `check` (when this machine does not see the worker's files and servers)")
    .action(async (opts: RunOptions) => {
      const input = { config_path: opts.config, run_id: opts.runId, seed: opts.seed };
      const workflowId = opts.workflowId ?? pivotMiningWorkflowId(opts.runId);
      // What a run would refuse is reported to the person typing, every problem at once, and nothing starts.
      if (opts.check) reportFindings(await checkRun(input, workflowId).finally(closePools));
      const { client, close } = await connectClient();
      try {
        await startPivotMining(client, input, { workflowId, taskQueue: TASK_QUEUE });
        console.error(`started workflow ${workflowId} on task queue ${TASK_QUEUE}`);
        if (!opts.follow) {
          console.log(workflowId);
          return;
        }
        printResult(await followRun(client, workflowId));
      } finally {
        await close();
      }
    });
}
