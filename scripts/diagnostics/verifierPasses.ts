// A fixed number of whole verify() passes over the vectors NeMo Gym 0.4.0 can take (or every
// STRIDE-th of them, as the timed bench's subset), for scripts/diagnostics/verifierInstructions.ts to
// count the instructions of under valgrind. Prints one JSON line.
// Run: npx tsx scripts/diagnostics/verifierPasses.ts PASSES [STRIDE]
import { loadVectors, verifyPass } from '../bench/verifierVectors';

const passes = Number(process.argv[2]);
const stride = Number(process.argv[3] ?? 1);
if (!Number.isInteger(passes) || passes < 0 || !Number.isInteger(stride) || stride < 1) {
  console.error(
    `usage: verifierPasses.ts PASSES [STRIDE] (whole numbers, got ${JSON.stringify(process.argv.slice(2))})`,
  );
  process.exit(2);
}
const vectors = loadVectors().common.filter((_, index) => index % stride === 0);
let rewardSum = 0;
for (let pass = 0; pass < passes; pass++) rewardSum += verifyPass(vectors);
console.log(JSON.stringify({ vectors: vectors.length, passes, reward_sum: rewardSum }));
