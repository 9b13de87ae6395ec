import path from 'node:path';
import type { Command } from 'commander';
import { loadPipelineConfig } from '../../activities/configFile';
import { startPivotMining } from '../../client';
import { TASK_QUEUE } from '../../workers/connection';
import { connectClient } from '../lib/client';
import { followRun } from '../lib/follow';
import { printResult } from '../lib/printResult';

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
    .action(async (opts: { config: string; runId?: string; seed?: number; workflowId?: string; follow: boolean }) => {
      // Validate here too, so a typo is reported to the person typing rather than in a workflow failure.
      await loadPipelineConfig(path.resolve(opts.config));
      const workflowId =
        opts.workflowId ?? `pivot-mining-${opts.runId ?? new Date().toISOString().replace(/[:.]/g, '-')}`;
      const { client, close } = await connectClient();
      try {
        await startPivotMining(
          client,
          { config_path: opts.config, run_id: opts.runId, seed: opts.seed },
          { workflowId, taskQueue: TASK_QUEUE },
        );
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
