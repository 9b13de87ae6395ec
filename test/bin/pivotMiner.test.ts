import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fixturesDir } from '../helpers/fixtures';

// bin/pivot-miner, the command npm installs: `validate` runs without NODE_EXTRA_CA_CERTS, every
// other command with it. A bundle path that does not exist makes Node warn on stderr, which shows
// whether the variable reached it.

const repoRoot = path.resolve(__dirname, '../..');
const launcher = path.join(repoRoot, 'bin/pivot-miner');
const validRows = path.join(fixturesDir, 'validator', '001_valid_function_call_rows.jsonl');
const missingBundle = path.join(tmpdir(), 'pivot-miner-no-such-ca-bundle.pem');
const EXTRA_CERTS_WARNING = /Ignoring extra certs from/;

function run(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const { status, stdout, stderr } = spawnSync(command, args, {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { status, stdout, stderr };
}

test("pivot-miner validate runs without NODE_EXTRA_CA_CERTS: its output stays the validator's alone", () => {
  const direct = run(process.execPath, ['bin/pivot-miner.js', 'validate', '--path', validRows], {
    NODE_EXTRA_CA_CERTS: missingBundle,
  });
  // Node itself reads the variable: run directly, the command's stderr gets Node's warning.
  assert.match(direct.stderr, EXTRA_CERTS_WARNING);
  const launched = run(launcher, ['validate', '--path', validRows], { NODE_EXTRA_CA_CERTS: missingBundle });
  assert.equal(launched.status, 0, launched.stderr);
  assert.equal(launched.stderr, '');
  assert.equal(launched.stdout, direct.stdout);
  assert.match(launched.stdout, /^rows: \d+\n/);
});

test('pivot-miner keeps NODE_EXTRA_CA_CERTS for the other commands, also started through a symlink as npm links it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pivot-miner-bin-'));
  try {
    const link = path.join(dir, 'pivot-miner');
    symlinkSync(launcher, link);
    const profile = run(
      link,
      [
        'profile',
        '--materialized-inputs',
        path.join(dir, 'missing.jsonl'),
        '--rollouts',
        path.join(dir, 'missing.jsonl'),
      ],
      { NODE_EXTRA_CA_CERTS: missingBundle },
    );
    assert.notEqual(profile.status, 0);
    assert.match(profile.stderr, /file not found/);
    assert.match(profile.stderr, EXTRA_CERTS_WARNING);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("pivot-miner validate has V8 optimize on the scanning threads; the other commands keep V8's default", () => {
  // A `node` ahead of the real one on PATH records the arguments the launcher gives it.
  const dir = mkdtempSync(path.join(tmpdir(), 'pivot-miner-node-args-'));
  try {
    const record = path.join(dir, 'args');
    const shim = path.join(dir, 'node');
    writeFileSync(shim, `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\nexec '${process.execPath}' "$@"\n`);
    chmodSync(shim, 0o755);
    const env = { PATH: `${dir}:${process.env.PATH ?? ''}` };
    const validate = run(launcher, ['validate', '--path', validRows], env);
    assert.equal(validate.status, 0, validate.stderr);
    assert.deepEqual(readFileSync(record, 'utf8').split('\n').slice(0, 4), [
      '--no-concurrent-recompilation',
      '--single-threaded-gc',
      path.join(repoRoot, 'bin/pivot-miner.js'),
      'validate',
    ]);
    const help = run(launcher, ['--help'], env);
    assert.equal(help.status, 0, help.stderr);
    assert.deepEqual(readFileSync(record, 'utf8').split('\n').slice(0, 2), [
      path.join(repoRoot, 'bin/pivot-miner.js'),
      '--help',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
