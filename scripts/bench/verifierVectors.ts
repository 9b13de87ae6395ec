// The verifier vectors both verifier benches time (test/fixtures/verifier/vectors.jsonl), parsed
// once and checked against our verifier before anything is timed or counted.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { expectedActionSchema } from '../../gym/schemas';
import * as verifier from '../../gym/verifier';

// Bound imports, as the verifier's own modules bind theirs (gym/verifier/index.ts says why): the cost of a
// getter per call is the caller's module interop, not the verifier's.
const { toolCallComparatorConfigSchema, verifyResponse } = verifier;

export const vectorsPath = path.resolve(__dirname, '../../test/fixtures/verifier/vectors.jsonl');

/** Every this-many-th vector makes the benches' subset: the same mix in a fraction of the memory. */
export const SUBSET_STRIDE = 14;

const vectorSchema = z.object({
  // Parsed once up front, as the resources server parses its config once at start-up.
  config: toolCallComparatorConfigSchema,
  expected_action: expectedActionSchema,
  response: z.object({ output: z.array(z.unknown()) }),
  reward: z.number(),
  category: z.string(),
});
export type Vector = z.infer<typeof vectorSchema>;

/** Every vector, and the ones NeMo Gym 0.4.0 can take too (the anchor's set). */
export function loadVectors(): { all: Vector[]; common: Vector[] } {
  const all = fs
    .readFileSync(vectorsPath, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => vectorSchema.parse(JSON.parse(line)));
  const differing = all.filter((v) => {
    const result = verifyResponse(v.expected_action, v.response, v.config);
    return result.reward !== v.reward || result.category !== v.category;
  });
  if (differing.length > 0) throw new Error(`${differing.length} verdicts differ from the vectors'`);
  // NeMo Gym 0.4.0's verifier knows no function_call_batch (later commits added it), so the
  // comparison runs on the vectors both sides can take.
  const common = all.filter((v) => v.expected_action.type !== 'function_call_batch');
  return { all, common };
}

/** One whole pass: verify() of every vector in order; the reward sum keeps the work observable. */
export function verifyPass(vectors: readonly Vector[]): number {
  let rewardSum = 0;
  for (const v of vectors) rewardSum += verifyResponse(v.expected_action, v.response, v.config).reward;
  return rewardSum;
}
