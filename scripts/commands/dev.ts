import type { Command } from 'commander';
import { TASK_QUEUE } from '../../workers/connection';
import { startLocalStack } from '../lib/localStack';

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description(
      'run the local stack until Ctrl-C: Temporal dev server (SQLite under .state/), a worker and the embedded simulators',
    )
    .option(
      '--port <n>',
      'Temporal frontend port (default PIVOT_MINER_DEV_PORT, else 7233); a server already listening there is reused',
      (v) => Number.parseInt(v, 10),
    )
    .action(async (opts: { port?: number }) => {
      const stack = await startLocalStack({ port: opts.port });
      console.error(`Temporal: ${stack.devServer.address}   UI: ${stack.devServer.uiUrl}`);
      console.error(
        `worker on task queue ${TASK_QUEUE}; start a run with: npx pivot-miner run --config configs/demo.yaml`,
      );
      try {
        await stack.worker.run();
      } finally {
        await stack.shutdown();
      }
    });
}
