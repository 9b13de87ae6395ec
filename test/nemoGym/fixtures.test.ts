import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { fixturesDir } from '../helpers/fixtures';

// The NeMo Gym environment files in test/fixtures/gym are what the pinned NeMo Gym 0.4.0 package
// ships: the script that regenerates them, in --check mode, finds no difference, and names one.

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
