import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fixturesDir } from '../../helpers/fixtures';
import { tempDir } from '../../gym/convert/helpers';

const repoRoot = path.resolve(__dirname, '../../..');

function cli(args: string[]) {
  return spawnSync(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), 'convert', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
}

test('convert writes candidates, skip audit and metrics, and prints the counts', () => {
  const outDir = tempDir();
  const inputs = ['example_session_state_mgmt/example_rollouts.jsonl', 'chat/xlam_fc.jsonl'].map((f) =>
    path.join(fixturesDir, 'gym', f),
  );
  const result = cli([
    '--input',
    ...inputs,
    '--agent-name',
    'pivot_agent',
    '--out-dir',
    outDir,
    '--min-source-reward',
    '1',
    '--source-preference',
    'off',
  ]);
  assert.equal(result.status, 0, result.stderr);
  const metrics = JSON.parse(readFileSync(path.join(outDir, 'candidates_metrics.json'), 'utf8'));
  // session_state_mgmt: 15 decision points, 5 parallel; xlam_fc chat: 6 of positive rollouts, 1 parallel.
  assert.equal(metrics.trajectories, 10);
  assert.equal(metrics.decision_points, 21);
  assert.equal(metrics.candidates, 15);
  assert.equal(metrics.by_skip_reason.parallel_tool_calls, 6);
  assert.match(result.stdout, /decision points: +21/);
  assert.match(result.stdout, /candidates: +15 \(function_call=7, message=8\)/);
  assert.match(result.stdout, /skipped: +6 \(parallel_tool_calls=6\)/);
  const lines = readFileSync(path.join(outDir, 'candidates.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 15);
  assert.ok(existsSync(path.join(outDir, 'candidates_skipped.jsonl')));
});

test('batch pivots and a bad option value', () => {
  const outDir = tempDir();
  const input = path.join(fixturesDir, 'gym', 'example_session_state_mgmt', 'example_rollouts.jsonl');
  const batch = cli(['--input', input, '--agent-name', 'a', '--out-dir', outDir, '--batch-pivots']);
  assert.equal(batch.status, 0, batch.stderr);
  assert.match(batch.stdout, /function_call_batch=5/);

  const bad = cli(['--input', input, '--agent-name', 'a', '--out-dir', outDir, '--min-source-reward', 'high']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--min-source-reward must be a number/);
});

test('bad input fails with file, line and reason, without a stack trace', () => {
  const outDir = tempDir();
  const taskRows = path.join(fixturesDir, 'gym', 'example_single_tool_call', 'example.jsonl');
  const result = cli(['--input', taskRows, '--agent-name', 'a', '--out-dir', outDir]);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /example\.jsonl:1: no source format fits this row/);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
  assert.ok(!existsSync(path.join(outDir, 'candidates.jsonl')), 'no partial output is left behind');
});
