import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { instructionsOf, instructionsPerVector } from '../../../scripts/diagnostics/verifierInstructions';
import { loadVectors } from '../../../scripts/bench/verifierVectors';

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../../..');

test("the instruction count is read from cachegrind's summary, and a summary without one is an error", () => {
  const stderr = [
    '==26486== Cachegrind, a high-precision tracing profiler',
    '==26486== ',
    '==26486== I   refs:      6,419,870,048',
    '==26486== Branches:      1,120,327,306  (1,087,440,758 cond + 32,886,548 ind)',
  ].join('\n');
  assert.equal(instructionsOf(stderr), 6_419_870_048);
  assert.throws(() => instructionsOf('==1== valgrind: failed to start tool'), /no instruction count/);
});

test('instructions per vector are the two counts apart over the extra passes, and counts that did not grow are refused', () => {
  assert.equal(instructionsPerVector(1_000_000, 1_800_000, 20, 100), 400);
  assert.throws(() => instructionsPerVector(100, 100, 1, 1), /not comparable/);
});

test('the pass runner verifies every common vector (or every STRIDE-th) on every pass', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/diagnostics/verifierPasses.ts', '3'], {
    cwd: repoRoot,
  });
  const { common } = loadVectors();
  const expectedRewardSum = common.reduce((sum, v) => sum + v.reward, 0);
  const printed = JSON.parse(stdout.trim()) as { vectors: number; passes: number; reward_sum: number };
  assert.equal(printed.vectors, common.length);
  assert.equal(printed.passes, 3);
  assert.ok(
    Math.abs(printed.reward_sum - 3 * expectedRewardSum) < 1e-6,
    `reward sum ${printed.reward_sum}, expected ${3 * expectedRewardSum}`,
  );
  const { stdout: subsetOut } = await run(
    process.execPath,
    ['--import', 'tsx', 'scripts/diagnostics/verifierPasses.ts', '2', '14'],
    { cwd: repoRoot },
  );
  const subset = common.filter((_, index) => index % 14 === 0);
  const printedSubset = JSON.parse(subsetOut.trim()) as { vectors: number; passes: number; reward_sum: number };
  assert.equal(printedSubset.vectors, subset.length);
  assert.ok(Math.abs(printedSubset.reward_sum - 2 * subset.reduce((sum, v) => sum + v.reward, 0)) < 1e-6);
  await assert.rejects(
    run(process.execPath, ['--import', 'tsx', 'scripts/diagnostics/verifierPasses.ts', 'many'], { cwd: repoRoot }),
    /usage: verifierPasses\.ts PASSES/,
  );
});
