import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { referenceValidatorScript } from '../../scripts/bench/python/nemoGym';
import { fixturesDir } from '../helpers/fixtures';

// The NeMo Gym data in test/fixtures is what NeMo Gym 0.4.0 gives: the environment files are the
// pinned package's, and the validator cases are what 0.4.0's validator does on each case file. The
// scripts that regenerate them, in --check mode, find no difference, and name one.

const run = promisify(execFile);
const gymDir = path.join(fixturesDir, 'gym');
const script = path.join(gymDir, 'from-nemo-gym.sh');

test("the copies of NeMo Gym's environment files match the pinned 0.4.0 package", { timeout: 600_000 }, async () => {
  const { stderr } = await run('bash', [script, '--check'], { maxBuffer: 1 << 20 });
  assert.equal(stderr, '');
});

test('the check names a copy that drifted, and copying restores it', { timeout: 600_000 }, async () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-fixture-drift-'));
  after(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(gymDir, copy, { recursive: true });
  appendFileSync(path.join(copy, 'xlam_fc', 'xlam_fc.yaml'), '# drifted\n');
  await assert.rejects(run('bash', [script, '--check', copy]), (err: Error & { stderr?: string }) => {
    assert.equal(
      err.stderr,
      `differs from NeMo Gym 0.4.0: gym/xlam_fc/xlam_fc.yaml (${expectedUpstream(err.stderr)})\n`,
    );
    return true;
  });
  await run('bash', [script, copy]);
  const { stderr } = await run('bash', [script, '--check', copy]);
  assert.equal(stderr, '');
});

/** The upstream path the script names, which lives in the machine's build cache. */
function expectedUpstream(stderr: string | undefined): string {
  const m = /\((\/[^)]*\/resources_servers\/xlam_fc\/configs\/xlam_fc\.yaml)\)/.exec(stderr ?? '');
  assert.ok(m, `no upstream path in ${JSON.stringify(stderr)}`);
  return m[1]!;
}

test("the recorded validator cases are what NeMo Gym 0.4.0's validator does", { timeout: 600_000 }, async () => {
  const validator = await referenceValidatorScript('python3');
  const recorder = path.join(fixturesDir, 'validator', 'record_cases.py');
  const { stderr } = await run('python3', [recorder, validator, '--check'], { maxBuffer: 1 << 20 });
  assert.equal(stderr, '');
  const copy = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-cases-drift-'));
  after(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(path.join(fixturesDir, 'validator'), copy, { recursive: true });
  const casesFile = path.join(copy, 'cases.json');
  writeFileSync(casesFile, readFileSync(casesFile, 'utf8').replace('"exit_code": 0', '"exit_code": 1'));
  await assert.rejects(
    run('python3', [path.join(copy, 'record_cases.py'), validator, '--check']),
    (err: Error & { stderr?: string }) => {
      assert.equal(err.stderr, 'differs from the validator: valid_function_call_rows\n');
      return true;
    },
  );
});
