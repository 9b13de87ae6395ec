// Verifier throughput over the whole NeMo Gym vector file. Prints numbers only; parity is the
// test suite's job (test/gym/verifier.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { expectedActionSchema } from '../../gym/schemas';
import { toolCallComparatorConfigSchema, verifyResponse } from '../../gym/verifier';

const WARMUP_PASSES = 3;
const PASSES = 10;

const vectorSchema = z.object({
  config: toolCallComparatorConfigSchema,
  expected_action: expectedActionSchema,
  response: z.object({ output: z.array(z.unknown()) }),
});

function main(): void {
  const file = path.resolve(__dirname, '../../../shared/fixtures/verifier/vectors.jsonl');
  const vectors = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => vectorSchema.parse(JSON.parse(line)));

  // Untimed passes let the JIT settle so the timed ones measure steady state.
  let rewardSum = 0;
  for (let pass = 0; pass < WARMUP_PASSES; pass++) {
    for (const v of vectors) rewardSum += verifyResponse(v.expected_action, v.response, v.config).reward;
  }

  const rates: number[] = [];
  for (let pass = 1; pass <= PASSES; pass++) {
    const start = process.hrtime.bigint();
    for (const v of vectors) rewardSum += verifyResponse(v.expected_action, v.response, v.config).reward;
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rates.push(vectors.length / seconds);
    console.log(`pass ${pass}: ${vectors.length} verifications in ${(seconds * 1000).toFixed(1)} ms, ${Math.round(vectors.length / seconds)}/s`);
  }
  const sorted = [...rates].sort((a, b) => a - b);
  console.log(`verifier: median ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} verifications/s over ${PASSES} passes of ${vectors.length} vectors (reward checksum ${rewardSum.toFixed(3)})`);
}

main();
