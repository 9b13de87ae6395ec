import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expandSourceGlobs } from '../../../activities/pool/sources';

let base: string;
let outside: string;

before(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'pivot-sources-'));
  outside = mkdtempSync(path.join(os.tmpdir(), 'pivot-sources-outside-'));
  for (const f of ['a/1.jsonl', 'a/b/2.jsonl', 'a/b/c/3.jsonl', 'a/notes.txt', 'z.jsonl']) {
    mkdirSync(path.dirname(path.join(base, f)), { recursive: true });
    writeFileSync(path.join(base, f), '{}\n');
  }
  writeFileSync(path.join(outside, 'secret.jsonl'), '{}\n');
});

after(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

test('`*` stays in one directory, `**` spans directories; results are sorted and unique', async () => {
  const rel = async (globs: string[]) => (await expandSourceGlobs(base, globs)).map((f) => path.relative(base, f));
  assert.deepEqual(await rel(['a/*.jsonl']), ['a/1.jsonl']);
  assert.deepEqual(await rel(['a/**/*.jsonl']), ['a/1.jsonl', 'a/b/2.jsonl', 'a/b/c/3.jsonl']);
  assert.deepEqual(await rel(['**/*.jsonl', 'a/*.jsonl']), ['a/1.jsonl', 'a/b/2.jsonl', 'a/b/c/3.jsonl', 'z.jsonl']);
  assert.deepEqual(await rel(['nothing/*.jsonl']), []);
});

test('globs that leave the base directory are refused: `..`, absolute, or through a symlink', async () => {
  await assert.rejects(expandSourceGlobs(base, ['../*/*.jsonl']), /outside the allowed root/);
  await assert.rejects(expandSourceGlobs(base, [`${outside}/*.jsonl`]), /outside the allowed root/);
  symlinkSync(outside, path.join(base, 'a', 'link'));
  await assert.rejects(expandSourceGlobs(base, ['a/link/*.jsonl']), /outside the allowed root/);
});
