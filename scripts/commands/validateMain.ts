import { Command } from 'commander';
import type { Worker } from 'node:worker_threads';
import { registerValidateCommand } from './validate';

// `pivot-miner validate` on its own, without the other sub-commands and what they load (Temporal,
// the worker): bin/pivot-miner.js runs this, bundled, so the command starts about as fast as
// NeMo Gym's Python script, which it is measured against process for process.

/** `workerScript`, `idleWorkers`: what the validator's worker threads load, and workers started
 * already (see PivotValidatorOptions). */
export async function runValidateCli(argv: readonly string[], workerScript?: string, idleWorkers?: Worker[]): Promise<void> {
  const program = new Command().name('pivot-miner');
  registerValidateCommand(program, workerScript, idleWorkers);
  await program.parseAsync([...argv]);
}
