import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fixturesDir } from './fixtures';
import { checksums } from './runDir';

// The fixtures are reference data other tests compare against byte for byte, so a copy that drifted
// (an editor's line endings, a lost file, a "fixed" expectation) must fail here, not pass there.

const MANIFEST = 'SHA256SUMS';

/** Relative path → sha256 as SHA256SUMS lists them, each line checked for sha256sum's format. */
function readManifest(): Map<string, string> {
  const file = path.join(fixturesDir, MANIFEST);
  const listed = new Map<string, string>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line === '') return;
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
      assert.ok(m, `${file}:${i + 1}: not "<sha256>  <path>": ${JSON.stringify(line)}`);
      assert.ok(!listed.has(m[2]!), `${file}:${i + 1}: ${m[2]} is listed twice`);
      listed.set(m[2]!, m[1]!);
    });
  return listed;
}

test('every fixture file is listed in SHA256SUMS and has the bytes it lists', () => {
  const listed = readManifest();
  const present = checksums(fixturesDir, false);
  delete present[MANIFEST];
  assert.ok(listed.size > 100, `only ${listed.size} files listed`);
  assert.deepEqual(
    Object.keys(present).filter((f) => !listed.has(f)),
    [],
    'files not in SHA256SUMS (run test/fixtures/write-sha256sums.sh after a deliberate change)',
  );
  assert.deepEqual(
    [...listed.keys()].filter((f) => !(f in present)),
    [],
    'files in SHA256SUMS that are missing',
  );
  const changed = [...listed].filter(([f, sha]) => present[f] !== sha).map(([f]) => f);
  assert.deepEqual(changed, [], 'files whose sha256 differs from SHA256SUMS');
});

test('the manifest is sorted bytewise, so rewriting it is a no-op unless a file changed', () => {
  const paths = [...readManifest().keys()];
  assert.deepEqual(paths, [...paths].sort());
});
