import { Command, CommanderError } from 'commander';
import { statSync } from 'node:fs';
import { z } from 'zod';
import { parseRequireAnyField, validatePivotDataset, type PivotValidatorOptions } from '../../gym/validator';
import { defaultThreads as threadsForSize, type ChunkThreads } from '../../gym/validator/parallel';

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

/** Threads by the file's size (see gym/validator/parallel.ts); one for an unreadable file (the
 * validator then says why it cannot read it). */
export function defaultThreads(path: string): number {
  try {
    return threadsForSize(statSync(path).size);
  } catch {
    return 1;
  }
}

function defineValidateCommand(command: Command): Command {
  return (
    command
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
      })
  );
}

function toValidatorOptions(raw: unknown, workerScript?: string, started?: ChunkThreads): PivotValidatorOptions {
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
    started,
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

/** `workerScript` and `started`: see PivotValidatorOptions. */
export function registerValidateCommand(program: Command, workerScript?: string, started?: ChunkThreads): void {
  defineValidateCommand(program.command('validate')).action(async (raw: unknown) => {
    const options = toValidatorOptions(raw, workerScript, started);
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
