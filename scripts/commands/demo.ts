import type { Command } from 'commander';
import { TASK_QUEUE } from '../../workers/connection';
import { startPivotMining } from '../../client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { connectClient } from '../lib/client';
import { followRun } from '../lib/follow';
import { startLocalStack } from '../lib/localStack';
import { printResult } from '../lib/printResult';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('the main job end to end on the embedded default: dev server, worker, simulators, pipeline; prints the pivots.jsonl path last')
    .option('-c, --config <file>', 'pipeline config', 'configs/demo.yaml')
    .option('--seed <n>', 'override the config seed', (v) => Number.parseInt(v, 10))
    .action(async (opts: { config: string; seed?: number }) => {
      const stack = await startLocalStack();
      console.error(`Temporal UI: ${stack.devServer.uiUrl}`);
      console.error('NOTE: the policy is a SEEDED SIMULATOR standing in for an LLM; every other server is real HTTP.');
      let result: PivotMiningResult | undefined;
      try {
        await stack.worker.runUntil(async () => {
          const { client, close } = await connectClient();
          try {
            const workflowId = `pivot-mining-demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
            await startPivotMining(client, { config_path: opts.config, seed: opts.seed }, { workflowId, taskQueue: TASK_QUEUE });
            console.error(`started ${workflowId}`);
            result = await followRun(client, workflowId);
          } finally {
            await close();
          }
        });
      } finally {
        await stack.shutdown();
      }
      if (result) printResult(result);
    });
}
