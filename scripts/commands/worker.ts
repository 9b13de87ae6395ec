import type { Command } from 'commander';
import { main as runWorkerMain } from '../../workers/main';
import type { MetricsFlags } from '../../workers/metrics';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'run a worker on the pivot-mining task queue (Temporal from TEMPORAL_ADDRESS etc., default localhost:7233)',
    )
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics on this port (off by default; or PIVOT_MINER_METRICS_ADDRESS=ip:port)',
    )
    .option(
      '--metrics-host <ip>',
      'IP address the metrics endpoint binds (default 127.0.0.1; 0.0.0.0 for a remote scraper)',
    )
    .action(async (flags: MetricsFlags) => {
      await runWorkerMain(flags);
    });
}
