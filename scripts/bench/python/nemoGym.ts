// The Python side of the validator and verifier benchmarks: NeMo Gym 0.4.0's own code, run in its
// venv (scripts/ensure-nemo-gym.sh) on the same inputs as ours, in the same benchmark run.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../../..');
const NEMO_GYM_VERSION = '0.4.0';
/** Where the pivot-dataset skill keeps the validator inside NeMo Gym's source distribution (the
 * wheel leaves the skills out). This is 0.4.0's path; from 0.5.0 the skill's own home is
 * `.agents/skills/nemo-gym-pivot-datasets/` (NVIDIA-NeMo/Gym#2007), the script unchanged. */
const VALIDATOR_IN_SDIST = `nemo_gym-${NEMO_GYM_VERSION}/.claude/skills/nemo-gym-pivot-datasets/scripts/validate_pivot_dataset.py`;

/** The venv's python, installing NeMo Gym first if this machine has not yet (a few minutes, once). */
export async function nemoGymPython(): Promise<string> {
  const { stdout } = await run('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh')], { maxBuffer: 1 << 20 });
  return path.join(stdout.trim(), 'python');
}

/** NeMo Gym's `validate_pivot_dataset.py`, taken from the 0.4.0 sdist through pip and cached. */
export async function referenceValidatorScript(python: string): Promise<string> {
  const { stdout } = await run('bash', [
    '-c',
    `source ${JSON.stringify(path.join(repoRoot, 'scripts/lib/cacheDir.sh'))} && echo "$PIVOT_MINER_CACHE"`,
  ]);
  const dir = path.join(stdout.trim(), `nemo-gym-${NEMO_GYM_VERSION}-sdist`);
  const script = path.join(dir, VALIDATOR_IN_SDIST);
  if (existsSync(script)) return script;
  mkdirSync(dir, { recursive: true });
  const tarball = path.join(dir, `nemo_gym-${NEMO_GYM_VERSION}.tar.gz`);
  if (!existsSync(tarball)) {
    // --python-version lets pip fetch the sdist without building its metadata (minutes otherwise).
    await run(
      python,
      [
        '-m',
        'pip',
        'download',
        `nemo-gym==${NEMO_GYM_VERSION}`,
        '--no-deps',
        '--no-binary',
        ':all:',
        '--only-binary',
        ':none:',
        '--python-version',
        '3.12',
        '--quiet',
        '-d',
        dir,
      ],
      { maxBuffer: 1 << 24 },
    );
  }
  await run('tar', ['-xzf', tarball, '-C', dir, VALIDATOR_IN_SDIST]);
  return script;
}

export const anchorResultSchema = z
  .object({
    cases: z.number().int(),
    /** Per timed pass: items per wall-clock second, and per second of the process's CPU time. */
    rates: z.array(z.number()),
    cpu_rates: z.array(z.number()),
    median: z.number(),
  })
  .loose();
export type AnchorResult = z.infer<typeof anchorResultSchema>;

/** Runs a timing script from this folder; it prints one JSON line with its per-pass rates. */
export async function runPythonAnchor(
  python: string,
  script: string,
  args: string[],
  cwd?: string,
): Promise<AnchorResult> {
  const { stdout } = await run(python, [path.join(__dirname, script), ...args], { cwd, maxBuffer: 1 << 24 });
  const lines = stdout.trim().split('\n');
  return anchorResultSchema.parse(JSON.parse(lines[lines.length - 1] ?? ''));
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
