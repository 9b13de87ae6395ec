import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { convertToCandidates } from '../../../gym/convert';
import { fixturesDir } from '../../helpers/fixtures';
import { tempDir } from './helpers';

// A source rollout's reward is a Python float: NeMo Gym's rollouts say `"reward": 1.0`, and the
// provenance that copies it keeps writing it so, in candidates and in the skip audit alike.

test('candidates and skip-audit provenance write source_reward as the float NeMo Gym wrote', async (t) => {
  const outDir = tempDir();
  t.after(() => rmSync(outDir, { recursive: true, force: true }));
  const input = path.join(fixturesDir, 'gym/aviary/example_rollouts.jsonl');
  const rewards = [...readFileSync(input, 'utf8').matchAll(/"reward": (\S+?)[,}]/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(rewards)].sort(), ['0.0', '1.0'], 'the fixture has integral float rewards');

  const summary = await convertToCandidates({
    inputs: [input],
    outDir,
    agent_name: 'pivot_agent',
    min_source_reward: 0,
  });
  for (const file of [summary.candidatesPath, summary.skippedPath]) {
    const written = [...readFileSync(file, 'utf8').matchAll(/"source_reward":([^,}]+)/g)].map((m) => m[1]);
    assert.ok(written.length > 0, file);
    assert.deepEqual([...new Set(written)].sort(), ['0.0', '1.0'], file);
  }
});
