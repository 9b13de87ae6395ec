import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

// `npm run bench -- --peer` takes its own few flags and refuses the other benches' before it starts
// anything (the peer bench itself is never run in a test: it is a measurement, minutes long).

const repoRoot = path.resolve(__dirname, '../../..');

function bench(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/run.ts', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
}

test('the peer bench refuses flags that are not its own, and bad values, before measuring anything', () => {
  const other = bench('--peer', '--tasks=10');
  assert.equal(other.status, 2);
  assert.match(other.stderr, /--tasks: not a flag of the peer bench/);
  assert.match(other.stderr, /npm run bench -- --peer \| --only=peer/);
  const repeats = bench('--only=peer', '--repeats=0');
  assert.equal(repeats.status, 2);
  assert.match(repeats.stderr, /--repeats=0: expected a whole number ≥ 1/);
  const notPeer = bench('--repeats=8');
  assert.equal(notPeer.status, 2);
  assert.match(notPeer.stderr, /flags of the peer bench/);
  const only = bench('--only=peers');
  assert.equal(only.status, 2);
  assert.match(only.stderr, /expected throughput, scale or peer/);
  for (const r of [other, repeats, notPeer, only]) assert.equal(r.stdout, '');
});

test('--nemo-gym takes 0.7.0 or 0.4.0, and only with --peer', () => {
  const unknown = bench('--peer', '--nemo-gym=0.5.1');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /--nemo-gym=0\.5\.1: expected 0\.7\.0 or 0\.4\.0/);
  const notPeer = bench('--nemo-gym=0.4.0');
  assert.equal(notPeer.status, 2);
  assert.match(notPeer.stderr, /--nemo-gym is a flag of the peer bench \(--peer\)/);
  const overlap = bench('--overlap', '--nemo-gym=0.7.0');
  assert.equal(overlap.status, 2);
  assert.match(overlap.stderr, /--nemo-gym: not a flag of the overlap bench/);
  for (const r of [unknown, notPeer, overlap]) assert.equal(r.stdout, '');
});
