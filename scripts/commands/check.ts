import type { Command } from 'commander';
import { checkRun, outlineText, pivotMiningWorkflowId, reportFindings } from '../lib/preflight';
import { closePools } from '../../activities/http/client';

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description(
      'check a pipeline config, its inputs and its servers as a run would, without Temporal; list every problem and write nothing',
    )
    .requiredOption('-c, --config <file>', 'pipeline config YAML, relative to PIVOT_MINER_BASE_DIR (default: here)')
    .option('--run-id <id>', 'the run id a run would use (checks that a resume of it would be accepted)')
    .option('--seed <n>', 'override the config seed', (v) => Number.parseInt(v, 10))
    .action(async (opts: { config: string; runId?: string; seed?: number }) => {
      const input = { config_path: opts.config, run_id: opts.runId, seed: opts.seed };
      try {
        // Without a run id, the run directory is named after the start time, unknown yet.
        const report = await checkRun(input, pivotMiningWorkflowId(opts.runId ?? 'START_TIME'));
        const outline = outlineText(report);
        if (outline) console.log(outline);
        reportFindings(report);
        console.log('ok: nothing a run would refuse');
      } finally {
        await closePools();
      }
    });
}
