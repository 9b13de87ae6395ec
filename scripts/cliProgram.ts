import { Command } from 'commander';
import { registerValidateCommand } from './commands/validate';
import { registerConvertCommand } from './commands/convert';
import { registerCancelCommand } from './commands/cancel';
import { registerCheckCommand } from './commands/check';
import { registerCurriculumCommand } from './commands/curriculum';
import { registerDemoCommand } from './commands/demo';
import { registerDevCommand } from './commands/dev';
import { registerRunCommand } from './commands/run';
import { registerSimulatorsCommand } from './commands/simulators';
import { registerStatusCommand } from './commands/status';
import { registerWorkerCommand } from './commands/worker';
import { registerProfileCommand } from './commands/profile';
import { registerScheduleCommand } from './commands/schedule';
import { registerVerifyServerCommand } from './commands/verify';
import { LOG_LEVEL_ENV } from '../workers/runtime';

// Every sub-command, defined but not run: scripts/cli.ts parses argv with it, and the CLI
// reference (docs/cli.md, scripts/cliReference.ts) is rendered from the same definitions.
// One file per sub-command under scripts/commands/; each registers itself on the program.
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('pivot-miner')
    .description('Durable PivotRL pivot mining for NeMo Gym, on Temporal')
    .option('--verbose', `Temporal SDK logs at INFO (default WARN; or ${LOG_LEVEL_ENV}=DEBUG|INFO|WARN|ERROR)`)
    .showHelpAfterError()
    // Through the environment, so a worker this command starts in a child process logs alike.
    .hook('preAction', () => {
      if (program.opts<{ verbose?: boolean }>().verbose) process.env[LOG_LEVEL_ENV] = 'INFO';
    });

  registerDemoCommand(program);
  registerCheckCommand(program);
  registerRunCommand(program);
  registerStatusCommand(program);
  registerCancelCommand(program);
  registerWorkerCommand(program);
  registerDevCommand(program);
  registerSimulatorsCommand(program);
  registerConvertCommand(program);
  registerValidateCommand(program);
  registerProfileCommand(program);
  registerScheduleCommand(program);
  registerCurriculumCommand(program);
  registerVerifyServerCommand(program);
  return program;
}
