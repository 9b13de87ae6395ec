import type { Command } from 'commander';
import { main as runWorkerMain } from '../../workers/main';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('run a worker on the pivot-mining task queue (Temporal from TEMPORAL_ADDRESS etc., default localhost:7233)')
    .action(async () => {
      await runWorkerMain();
    });
}
