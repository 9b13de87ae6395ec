import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fixturesDir } from '../../helpers/fixtures';

const repoRoot = path.resolve(__dirname, '../../..');
const dir = mkdtempSync(path.join(tmpdir(), 'profile-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface ProfileCase {
  name: string;
  materialized_inputs: object[];
  rollouts: object[];
}
const cases = JSON.parse(
  readFileSync(path.join(fixturesDir, 'gym/reward_profile_cases.json'), 'utf8'),
) as ProfileCase[];

function writeCase(caseName: string, stem: string): { inputs: string; rollouts: string } {
  const c = cases.find((x) => x.name === caseName)!;
  const inputs = path.join(dir, `${stem}_materialized_inputs.jsonl`);
  const rollouts = path.join(dir, `${stem}.jsonl`);
  writeFileSync(inputs, c.materialized_inputs.map((r) => `${JSON.stringify(r)}\n`).join(''));
  writeFileSync(rollouts, c.rollouts.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { inputs, rollouts };
}

function profile(args: string[]) {
  return spawnSync(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), 'profile', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
}

test('profile writes both files next to the rollouts and prints the NeMo Gym summary', () => {
  const { inputs, rollouts } = writeCase('test_profile_from_data', 'full');
  const result = profile(['--materialized-inputs', inputs, '--rollouts', rollouts]);
  assert.equal(result.status, 0, result.stderr);
  const profilingPath = path.join(dir, 'full_reward_profiling.jsonl');
  const agentPath = path.join(dir, 'full_agent_metrics.json');
  assert.equal(
    result.stdout,
    [
      'Profiling outputs:',
      'Reward profile completion: 6/6 rollout rows (100.00%)',
      'Input rows: 3 total; 3 complete; 0 partial; 0 without rollouts dropped from output.',
      'Masked from quality metrics: 0 rollout rows (kept in completion accounting above).',
      `Reward profiling outputs: ${profilingPath}`,
      `Agent-level metrics: ${agentPath}`,
      `Repeat-level metrics: ${path.join(dir, 'full_repeat_level_metrics.json')}`,
      '',
    ].join('\n'),
  );
  const groups = readFileSync(profilingPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    groups.map((g) => [g._ng_task_index, g['mean/reward'], g['std/bool']]),
    [
      [0, 0.5, Math.SQRT1_2],
      [1, 0.5, Math.SQRT1_2],
      [2, 0.5, Math.SQRT1_2],
    ],
  );
  const agents = JSON.parse(readFileSync(agentPath, 'utf8'));
  assert.deepEqual(agents[0].agent_ref, { name: 'my_agent' });
});

test('missing rollouts fail in strict mode with NeMo Gym wording and no stack trace', () => {
  const { inputs, rollouts } = writeCase('test_profile_from_data_allow_partial_profiles_completed_rollouts', 'partial');
  const strict = profile(['--materialized-inputs', inputs, '--rollouts', rollouts]);
  assert.equal(strict.status, 1);
  assert.match(
    strict.stderr,
    /Missing rollout results for 3 materialized input rows\. Missing rollout keys: \[\(1, 1\), \(2, 0\), \(2, 1\)\]\./,
  );
  assert.match(strict.stderr, /Use \+\+allow_partial_rollouts=True/);
  assert.doesNotMatch(strict.stderr, /\n\s+at /);

  const partial = profile(['--materialized-inputs', inputs, '--rollouts', rollouts, '--allow-partial-rollouts']);
  assert.equal(partial.status, 0, partial.stderr);
  assert.match(partial.stdout, /^Reward profile completion: 3\/6 rollout rows \(50\.00%\)$/m);
  assert.match(
    partial.stdout,
    /^Input rows: 3 total; 1 complete; 1 partial; 1 without rollouts dropped from output\.$/m,
  );
  const groups = readFileSync(path.join(dir, 'partial_reward_profiling.jsonl'), 'utf8').trim().split('\n');
  assert.equal(groups.length, 2);
});

test('bad input names file and line; missing files and flags are clear errors', () => {
  const { inputs, rollouts } = writeCase('test_profile_from_data', 'bad');
  writeFileSync(rollouts, `${readFileSync(rollouts, 'utf8').split('\n')[0]}\n{"_ng_task_index": 0,\n`);
  const bad = profile(['--materialized-inputs', inputs, '--rollouts', rollouts]);
  assert.equal(bad.status, 1);
  assert.ok(bad.stderr.startsWith(`${rollouts}:2: invalid JSON`), bad.stderr);

  const missing = profile(['--materialized-inputs', path.join(dir, 'nope.jsonl'), '--rollouts', rollouts]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /--materialized-inputs: file not found: .*nope\.jsonl/);

  const noFlag = profile(['--rollouts', rollouts]);
  assert.notEqual(noFlag.status, 0);
  assert.match(noFlag.stderr, /--materialized-inputs/);
});
