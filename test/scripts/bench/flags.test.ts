import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const repoRoot = path.resolve(__dirname, '../../..');

function bench(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/run.ts', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
}

test('the bench refuses an unknown flag or a bad value before measuring anything', () => {
  const unknown = bench('--cylces=2');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /Unknown option '--cylces'/);
  assert.match(unknown.stderr, /usage: npm run bench -- /);
  const bad = bench('--cycles=two');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--cycles=two: expected a whole number/);
  assert.equal(bad.stdout, '');
});
