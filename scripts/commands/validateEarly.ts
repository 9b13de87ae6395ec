import { statSync } from 'node:fs';
import { ChunkThreads, defaultThreads, type ChunkJob } from '../../gym/validator/parallel';
import { parseRequireAnyField } from '../../gym/validator/rowChecks';

// What bin/pivot-miner.js runs for `validate` before it loads the command: worker threads for a
// large file, started on a guess of the validator's job read off the plain argv spellings, so they
// check chunks while the command loads (some tenths of its run on a file of a few hundred MiB).
// The guess decides nothing: the validator keeps the threads only if the options it parses are
// the same job, and stops them otherwise. Bundled on its own (no commander, no zod).

const VALUED = new Set(['--path', '--agent-ref', '--require-field', '--require-any-field']);

/** The options of a `validate` argv (without the sub-command) when it only holds the spellings read
 * here, each once but the repeatable ones; undefined for anything else (--config, --threads, help,
 * a value that looks like an option, ...). */
export function guessJob(args: readonly string[]): { job: ChunkJob; threads: number } | undefined {
  const values = new Map<string, string[]>();
  let checkToolNames = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--no-check-tool-names') {
      checkToolNames = false;
      continue;
    }
    const equals = arg.indexOf('=');
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    if (!VALUED.has(flag)) return undefined;
    const value = equals === -1 ? args[++i] : arg.slice(equals + 1);
    if (value === undefined || value.startsWith('-')) return undefined;
    values.set(flag, [...(values.get(flag) ?? []), value]);
  }
  const [path, ...more] = values.get('--path') ?? [];
  const agentRefs = values.get('--agent-ref') ?? [];
  if (path === undefined || more.length > 0 || agentRefs.length > 1) return undefined;
  let fileSize: number;
  try {
    fileSize = statSync(path).size;
  } catch {
    return undefined;
  }
  const options = {
    agentRef: agentRefs[0],
    requireFields: values.get('--require-field') ?? [],
    requireAnyFields: (values.get('--require-any-field') ?? []).map(parseRequireAnyField),
    checkToolNames,
  };
  return { job: { path, fileSize, options }, threads: defaultThreads(fileSize) };
}

/** Threads at work on the guessed job, or undefined when there is no guess or one thread will do. */
export function startEarly(args: readonly string[], workerScript: string): ChunkThreads | undefined {
  const guess = guessJob(args);
  if (guess === undefined || guess.threads <= 1) return undefined;
  return new ChunkThreads(guess.job, guess.threads, workerScript);
}
