import { Command } from 'commander';
import { registerValidateCommand } from './validate';

// `pivot-miner validate` on its own, without the other sub-commands and what they load (Temporal,
// the worker): bin/pivot-miner.js runs this, bundled, so the command starts about as fast as
// NeMo Gym's Python script, which it is measured against process for process.

/** `workerScript`: what the validator's worker threads load (see PivotValidatorOptions). */
export async function runValidateCli(argv: readonly string[], workerScript?: string): Promise<void> {
  const program = new Command().name('pivot-miner');
  registerValidateCommand(program, workerScript);
  await program.parseAsync([...argv]);
}
