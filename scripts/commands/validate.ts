import { Command, CommanderError } from 'commander';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseRequireAnyField, validatePivotDataset, type PivotValidatorOptions } from '../../gym/validator';

// `pivot-miner validate`: NeMo Gym's validate_pivot_dataset.py as a sub-command, with the same
// options, output and exit codes (plus --config), so pipelines can swap one for the other.

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const validateArgsSchema = z.object({
  path: z.string(),
  agentRef: z.string().optional(),
  requireField: z.array(z.string()),
  requireAnyField: z.array(z.string()),
  checkToolNames: z.boolean(),
  config: z.string().optional(),
  threads: z.coerce.number().int().min(1).optional(),
});

/** Below this a file is checked on one thread: starting workers (each loads the validator) costs
 * about what a thread checks of a few MiB. */
const MIN_BYTES_PER_EXTRA_THREAD = 4 << 20;

/** Every available core for a large file, fewer for a smaller one, one for a small or unreadable
 * file (the validator then says why it cannot read it). */
export function defaultThreads(path: string): number {
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    return 1;
  }
  return Math.max(1, Math.min(availableParallelism(), Math.floor(bytes / MIN_BYTES_PER_EXTRA_THREAD)));
}

function defineValidateCommand(command: Command): Command {
  return command
    .description('Validate a pivot dataset JSONL (NeMo Gym validate_pivot_dataset.py checks and metrics)')
    .requiredOption('--path <path>', 'pivot dataset JSONL file')
    .option('--agent-ref <name>', "every row's agent_ref.name must equal this (even when empty)")
    .option('--require-field <path>', 'dotted field every row must have; repeatable', collect, [])
    .option('--require-any-field <list>', 'comma-separated fields, at least one required; repeatable', collect, [])
    .option('--no-check-tool-names', 'skip checking that the expected tool is listed in tools')
    .option('--config <gym_yaml>', "NeMo Gym config whose agents every row's agent_ref must name")
    .option('--threads <n>', 'worker threads (default: the available cores for files of some MiB, else 1)')
    // argparse, which the reference uses, exits 2 on usage errors; scripts may rely on that.
    .exitOverride((error: CommanderError) => {
      process.exit(error.exitCode === 0 ? 0 : 2);
    });
}

function toValidatorOptions(raw: unknown, workerScript?: string): PivotValidatorOptions {
  const args = validateArgsSchema.parse(raw);
  return {
    path: args.path,
    agentRef: args.agentRef,
    requireFields: args.requireField,
    requireAnyFields: args.requireAnyField.map(parseRequireAnyField),
    checkToolNames: args.checkToolNames,
    gymConfigPath: args.config,
    threads: args.threads ?? defaultThreads(args.path),
    workerScript,
  };
}

/** The validator options a `validate` argv (without the sub-command name) stands for. */
export function validateOptionsFromArgv(argv: readonly string[]): PivotValidatorOptions {
  const command = defineValidateCommand(new Command('validate'))
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  command.parse([...argv], { from: 'user' });
  return toValidatorOptions(command.opts());
}

export function registerValidateCommand(program: Command, workerScript?: string): void {
  defineValidateCommand(program.command('validate')).action(async (raw: unknown) => {
    const options = toValidatorOptions(raw, workerScript);
    let result;
    try {
      result = await validatePivotDataset(options);
    } catch (error) {
      // Unreadable input: the reference crashes here; we say why in one line instead.
      result = { exitCode: 1, stdout: '', stderr: `validation failed: ${(error as Error).message}\n` };
    }
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    process.exitCode = result.exitCode;
  });
}
