// Instructions one verification takes, ours against NeMo Gym 0.4.0's Python, counted by valgrind's
// cachegrind rather than timed. The timed bench (scripts/bench/verifier.ts) is the figure the issue
// asks for; this one is its yardstick for code changes: on a shared 2-core VM the timed ratio moves
// by a tenth or more between runs, an instruction count does not, so a change that saves work shows
// here even when the clock cannot tell it from the host's drift. It counts work, not time: cache
// misses and branch mispredictions cost time it does not see.
// cachegrind counts a whole process (start-up, tsx's compile, parsing the vectors, warm-up), so each
// side runs twice, differing only in passes over the vectors, and the difference is those passes.
// Needs valgrind (Debian: apt-get install valgrind). About 6 minutes on 2 cores.
// Run: npx tsx scripts/diagnostics/verifierInstructions.ts
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { nemoGymPython } from '../bench/python/nemoGym';
import { parseFlags } from '../bench/flags';
import { SUBSET_STRIDE, vectorsPath } from '../bench/verifierVectors';

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../..');

/** Passes before the counted ones on our side: V8 optimizes the verifier within them. The hot path
 * is optimized within 40, but the decoding path serves only the few vectors a pass that the
 * in-place comparison leaves undecided, so its functions reach V8's optimizing tier one by one
 * up to pass ~400 (`node --trace-opt`, 2026-11-26): counted from 50, that compiling and the
 * slower tiers before it read as some 270 instructions a verification (7.90k against 7.63k on
 * one version of the code) that a long-running verifier never pays again. */
const OURS_BASE_PASSES = 500;
/** Many, because two processes' start-ups differ by about 1% of their instructions (when V8
 * collects and compiles): over 40 counted passes that moved ours by up to 8% from run to run and
 * read 10% high, over 200 by under 2%. */
const OURS_COUNTED_PASSES = 200;
/** Python has no JIT; its base passes only settle its caches. Its passes are 7x ours in work. */
const PYTHON_BASE_PASSES = 2;
const PYTHON_COUNTED_PASSES = 10;

const CACHEGRIND = ['--tool=cachegrind', '--cache-sim=no', '--branch-sim=no', '--cachegrind-out-file=/dev/null'];

/** The instructions cachegrind's summary reports for the whole process (`==pid== I   refs: 1,234`). */
export function instructionsOf(valgrindStderr: string): number {
  const match = /I\s+refs:\s+([\d,]+)/.exec(valgrindStderr);
  if (!match?.[1]) throw new Error(`no instruction count in valgrind's output:\n${valgrindStderr.slice(-2000)}`);
  return Number(match[1].replaceAll(',', ''));
}

/** Instructions per verification from two whole-process counts that differ by `passes` passes over `vectors`. */
export function instructionsPerVector(base: number, more: number, passes: number, vectors: number): number {
  if (more <= base)
    throw new Error(
      `the run with ${passes} more passes counted ${more} instructions, not more than ${base}: the counts are not comparable`,
    );
  return (more - base) / (passes * vectors);
}

async function countInstructions(command: string, args: string[]): Promise<{ instructions: number; stdout: string }> {
  try {
    const { stdout, stderr } = await run('valgrind', [...CACHEGRIND, command, ...args], {
      cwd: repoRoot,
      maxBuffer: 1 << 26,
    });
    return { instructions: instructionsOf(stderr), stdout };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error('valgrind is not installed (Debian: apt-get install valgrind)', { cause: error });
    throw error;
  }
}

const oursSchema = z.object({ vectors: z.number().int(), passes: z.number().int() });

/** Our side: `verifierPasses.ts` under cachegrind. V8 compiles on the main thread here, so both runs
 * reach optimized code at the same pass, whatever valgrind's serialized threads would do to timing.
 * On every `stride`-th vector each run makes `stride` times the passes, the same work in all. */
async function oursPerVector(stride: number): Promise<{ perVector: number; vectors: number }> {
  const count = (passes: number) =>
    countInstructions(process.execPath, [
      '--no-concurrent-recompilation',
      '--import',
      'tsx',
      path.join(__dirname, 'verifierPasses.ts'),
      String(passes * stride),
      String(stride),
    ]);
  const [base, more] = await Promise.all([count(OURS_BASE_PASSES), count(OURS_BASE_PASSES + OURS_COUNTED_PASSES)]);
  const { vectors } = oursSchema.parse(JSON.parse(more.stdout.trim().split('\n').pop() ?? ''));
  return {
    perVector: instructionsPerVector(base.instructions, more.instructions, OURS_COUNTED_PASSES * stride, vectors),
    vectors,
  };
}

/** NeMo Gym's side: the timed bench's anchor with no time to fill (its warm-up passes, one timed pass). */
async function pythonPerVector(python: string, stride: number, vectors: number): Promise<number> {
  const count = (warmupPasses: number) =>
    countInstructions(python, [
      path.join(__dirname, '../bench/python/verifier_anchor.py'),
      vectorsPath,
      '0',
      String(warmupPasses * stride),
      String(stride),
    ]);
  const [base, more] = await Promise.all([
    count(PYTHON_BASE_PASSES),
    count(PYTHON_BASE_PASSES + PYTHON_COUNTED_PASSES),
  ]);
  return instructionsPerVector(base.instructions, more.instructions, PYTHON_COUNTED_PASSES * stride, vectors);
}

interface Counted {
  vectors: number;
  ours: number;
  python: number;
}

async function countBothSides(python: string, stride: number): Promise<Counted> {
  const ours = await oursPerVector(stride);
  return { vectors: ours.vectors, ours: ours.perVector, python: await pythonPerVector(python, stride, ours.vectors) };
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const ratioLine = (c: Counted) =>
  `python ${thousands(c.python)}  ours ${thousands(c.ours)}  python/ours ${(c.python / c.ours).toFixed(1)}x`;

async function main(): Promise<void> {
  const python = await nemoGymPython();
  const all = await countBothSides(python, 1);
  // The timed bench's subset: the same mix in a fraction of the memory, where ours runs faster.
  const subset = await countBothSides(python, SUBSET_STRIDE);
  console.log(
    `verifier instructions per verification (valgrind cachegrind: counted, not timed), ${all.vectors} vectors with a message or function_call expected:`,
  );
  console.log(`  ${ratioLine(all)}  (ours over ${OURS_COUNTED_PASSES} passes, python's over ${PYTHON_COUNTED_PASSES})`);
  console.log(
    `  the same on every ${SUBSET_STRIDE}th of them (${subset.vectors} vectors, ${SUBSET_STRIDE} times the passes): ${ratioLine(subset)}`,
  );
  console.log(
    JSON.stringify({
      bench: 'verifier_instructions',
      vectors_common: all.vectors,
      python_instructions_per_vector: Math.round(all.python),
      ours_instructions_per_vector: Math.round(all.ours),
      python_over_ours: Number((all.python / all.ours).toFixed(2)),
      subset_stride: SUBSET_STRIDE,
      python_instructions_per_vector_subset: Math.round(subset.python),
      ours_instructions_per_vector_subset: Math.round(subset.ours),
      python_over_ours_subset: Number((subset.python / subset.ours).toFixed(2)),
    }),
  );
}

if (require.main === module) {
  parseFlags('npx tsx scripts/diagnostics/verifierInstructions.ts (no flags)', {});
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
