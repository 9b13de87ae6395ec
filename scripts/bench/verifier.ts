// Verifier throughput against NeMo Gym's own Python verifier, in one run on the same vectors
// (test/fixtures/verifier/vectors.jsonl). Both sides do a whole verify() per vector and per pass:
// extract the action from the response, take the config (Python builds a ToolCallComparator from
// it), then read both `arguments` texts: Python with json.loads twice, ours in one side-by-side pass
// over the two texts that decodes only what that pass cannot decide. Nothing is compiled, cached or
// reused across calls or passes on either side. Every verdict of ours is checked against the
// vectors' before timing (the full parity suite is test/gym/verifier/index.test.ts).
// The two sides take turns in short windows of equal length, and each round's ratio is taken from
// its own pair of windows: this machine's speed for V8's code drifts by up to 2x over tens of
// seconds, in step across processes and cores (the host's, not the process's), so windows far
// apart in time would compare two different machines.
// Then the same rounds on every 14th vector: the same mix in a fraction of the memory, in a cycle
// short enough for the CPU to learn its branches; the difference bounds what the whole pass loses to
// the size and variety of the vector set rather than to verifying one vector.
// Run: npx tsx scripts/bench/verifier.ts
import { z } from 'zod';
import { loadVectors, SUBSET_STRIDE, vectorsPath, verifyPass, type Vector } from './verifierVectors';
import { median, nemoGymPython, runPythonAnchor } from './python/nemoGym';
import { parseFlags } from './flags';

parseFlags('npx tsx scripts/bench/verifier.ts (no flags)', {});

/** Python's anchor warms up for this many passes; it has no JIT to wait for. */
const PYTHON_WARMUP_PASSES = 3;
/** V8 tiers code up over many calls, later still on a busy machine (its compiler threads wait for
 * a core), so ours warms up for a while rather than a count of passes. */
const WARMUP_SECONDS = 3;
/** Each side's timed window per round: whole passes until it has gone by. */
const WINDOW_SECONDS = 1;
/** Python and TypeScript take turns, window after window, so a change of the machine's speed hits
 * both sides of a round alike. */
const ROUNDS = 8;
const SUBSET_ROUNDS = 4;

/** What the Python anchor reports besides its rates: how often 0.4.0 returns the vectors' verdict. */
const anchorVerdictsSchema = z.looseObject({ agree: z.number().int(), errors: z.number().int() });

interface Rates {
  rates: number[];
  cpuRates: number[];
}

/** Times whole passes over `vectors` until `seconds` have gone by (at least one). */
function timePasses(vectors: readonly Vector[], seconds: number, into: Rates): void {
  let rewardSum = 0;
  const until = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  for (let pass = 0; pass === 0 || process.hrtime.bigint() < until; pass++) {
    const wall = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    rewardSum += verifyPass(vectors);
    const used = process.cpuUsage(cpu);
    into.rates.push(vectors.length / (Number(process.hrtime.bigint() - wall) / 1e9));
    into.cpuRates.push(vectors.length / ((used.user + used.system) / 1e6));
  }
  // Keeps the loop's result observable so the JIT cannot drop the work.
  if (Number.isNaN(rewardSum)) throw new Error('reward sum is NaN');
}

const warmUp = (vectors: readonly Vector[]) => timePasses(vectors, WARMUP_SECONDS, newRates());

function newRates(): Rates {
  return { rates: [], cpuRates: [] };
}

interface PairedRounds {
  vectors: readonly Vector[];
  py: Rates;
  ours: Rates;
  roundRatios: number[];
  verdicts: z.infer<typeof anchorVerdictsSchema>;
}

/** Python's window, then ours right after it, `rounds` times, on every `stride`-th of `common`. */
async function pairedRounds(
  python: string,
  common: readonly Vector[],
  stride: number,
  rounds: number,
): Promise<PairedRounds> {
  const vectors = common.filter((_, index) => index % stride === 0);
  warmUp(vectors);
  const result: PairedRounds = {
    vectors,
    py: newRates(),
    ours: newRates(),
    roundRatios: [],
    verdicts: { agree: 0, errors: 0 },
  };
  for (let round = 1; round <= rounds; round++) {
    const anchor = await runPythonAnchor(python, 'verifier_anchor.py', [
      vectorsPath,
      String(WINDOW_SECONDS),
      String(PYTHON_WARMUP_PASSES),
      String(stride),
    ]);
    if (anchor.cases !== vectors.length)
      throw new Error(`python timed ${anchor.cases} vectors, ours ${vectors.length}`);
    result.verdicts = anchorVerdictsSchema.parse(anchor);
    result.py.rates.push(...anchor.rates);
    result.py.cpuRates.push(...anchor.cpu_rates);
    const window = newRates();
    timePasses(vectors, WINDOW_SECONDS, window);
    result.ours.rates.push(...window.rates);
    result.ours.cpuRates.push(...window.cpuRates);
    result.roundRatios.push(median(window.rates) / median(anchor.rates));
  }
  return result;
}

const perSecond = (rate: number) => `${Math.round(rate).toLocaleString('en-US')}/s`;

async function main(): Promise<void> {
  // NeMo Gym 0.4.0's verifier knows no function_call_batch, so the batch vectors are timed for us alone.
  const { all, common } = loadVectors();
  const python = await nemoGymPython();

  const { py, ours, roundRatios, verdicts } = await pairedRounds(python, common, 1, ROUNDS);
  // The same mix over a set small enough to stay in the core's cache (and to repeat in a short cycle).
  const subset = await pairedRounds(python, common, SUBSET_STRIDE, SUBSET_ROUNDS);
  const allRates = newRates();
  warmUp(all);
  timePasses(all, WINDOW_SECONDS, allRates);

  const pythonRate = median(py.rates);
  const oursRate = median(ours.rates);
  const ratio = median(roundRatios);
  const cpuRatio = median(ours.cpuRates) / median(py.cpuRates);
  const sortedRatios = [...roundRatios].sort((a, b) => a - b);
  console.log(
    `verifier, ${common.length} vectors with a message or function_call expected (NeMo Gym 0.4.0 verify() logic):`,
  );
  console.log(
    `  python ${perSecond(pythonRate)}  ours ${perSecond(oursRate)}  ours/python ${ratio.toFixed(1)}x, the median of ${ROUNDS} rounds' ratios  (per CPU second ${cpuRatio.toFixed(1)}x)`,
  );
  console.log(
    `  rounds (${WINDOW_SECONDS} s of each side, in turn): ${roundRatios.map((r) => `${r.toFixed(1)}x`).join(' ')}  (from ${sortedRatios[0]?.toFixed(1)}x to ${sortedRatios[sortedRatios.length - 1]?.toFixed(1)}x)`,
  );
  console.log(
    `  (0.4.0's own verdicts equal the vectors' on ${verdicts.agree} of ${common.length}, ${verdicts.errors} raised: the vectors come from a later NeMo Gym)`,
  );
  console.log(
    `  the same on every ${SUBSET_STRIDE}th of them (${subset.vectors.length} vectors, the same mix in a fraction of the memory), ${SUBSET_ROUNDS} rounds: ` +
      `python ${perSecond(median(subset.py.rates))}  ours ${perSecond(median(subset.ours.rates))}  ours/python ${median(subset.roundRatios).toFixed(1)}x`,
  );
  console.log(
    `verifier, all ${all.length} vectors incl. function_call_batch (ours only): ${perSecond(median(allRates.rates))}`,
  );
  console.log(
    JSON.stringify({
      bench: 'verifier',
      vectors_common: common.length,
      python_per_s: Math.round(pythonRate),
      ours_per_s: Math.round(oursRate),
      ours_over_python: Number(ratio.toFixed(2)),
      ours_over_python_cpu: Number(cpuRatio.toFixed(2)),
      ours_all_vectors_per_s: Math.round(median(allRates.rates)),
      round_ratios: roundRatios.map((r) => Number(r.toFixed(2))),
      subset_stride: SUBSET_STRIDE,
      ours_over_python_subset: Number(median(subset.roundRatios).toFixed(2)),
      window_seconds: WINDOW_SECONDS,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
