import { Command } from 'commander';
import type { ChunkThreads } from '../../gym/validator/parallel';
import { registerValidateCommand } from './validate';

// `pivot-miner validate` on its own, without the other sub-commands and what they load (Temporal,
// the worker): bin/pivot-miner.js runs this, bundled, so the command starts about as fast as
// NeMo Gym's Python script, which it is measured against process for process.

/** `workerScript`, `started`: what the validator's worker threads load, and threads started on a
 * guess of the run (see PivotValidatorOptions). */
export async function runValidateCli(
  argv: readonly string[],
  workerScript?: string,
  started?: ChunkThreads,
): Promise<void> {
  const program = new Command().name('pivot-miner');
  registerValidateCommand(program, workerScript, started);
  await program.parseAsync([...argv]);
}
