import { Command } from 'commander';

// One file per sub-command under scripts/commands/; each registers itself on the program.
const program = new Command();
program
  .name('pivot-miner')
  .description('Durable PivotRL pivot mining for NeMo Gym, on Temporal')
  .showHelpAfterError();

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
