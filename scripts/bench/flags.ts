import { parseArgs } from 'node:util';

// Bench and diagnostic flags are parsed strictly: a misspelt flag would otherwise be ignored and
// the run would measure the defaults while its reader believes otherwise.

type Spec = Record<string, { type: 'string' | 'boolean' }>;

/** The flags given, or exit 2 with the error and the usage line. */
export function parseFlags<T extends Spec>(usage: string, options: T, args: string[] = process.argv.slice(2)) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    refuse(`${(err as Error).message}\nusage: ${usage}`);
  }
}

/** A bad flag value: the message, and exit 2 before anything is measured. */
export function refuse(message: string): never {
  console.error(message);
  process.exit(2);
}

/** A flag's value as a whole number ≥ min, or undefined when the flag is absent. */
export function wholeNumber(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) refuse(`--${name}=${value}: expected a whole number ≥ ${min}`);
  return n;
}
