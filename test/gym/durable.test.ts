import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { mkdirDurably, renameDurably, syncDirContents, writeFileDurably } from '../../gym/durable';
import { recordSyncs } from '../helpers/syncSpy';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-durable-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a file written durably is synced, then its directory after the rename', async () => {
  const file = path.join(dir, 'run_summary.json');
  const { record } = await recordSyncs(() => writeFileDurably(file, '{"ok": true}\n'));
  assert.equal(readFileSync(file, 'utf8'), '{"ok": true}\n');
  assert.deepEqual(record.missing([file]), []);
});

test('a rename across directories syncs the file and both directories', async () => {
  mkdirSync(path.join(dir, 'a'));
  mkdirSync(path.join(dir, 'b'));
  const from = path.join(dir, 'a', 'x.jsonl');
  const to = path.join(dir, 'b', 'x.jsonl');
  writeFileSync(from, 'line\n');
  const { record } = await recordSyncs(() => renameDurably([[from, to]]));
  assert.deepEqual(record.missing([to]), []);
  assert.ok(record.synced(path.join(dir, 'a')));
});

test('a staged directory has every file in it synced, and itself', async () => {
  const staging = path.join(dir, 'staging');
  mkdirSync(staging);
  const files = ['pivots.jsonl', 'version.json'].map((name) => path.join(staging, name));
  for (const file of files) writeFileSync(file, path.basename(file));
  const { record } = await recordSyncs(() => syncDirContents(staging));
  assert.deepEqual(record.missing(files), []);
});

test('new directories are synced into their parents, from the first one made down', async () => {
  mkdirSync(path.join(dir, 'artifacts'));
  const runDir = path.join(dir, 'artifacts', 'runs', 'run-1', 'dataset');
  const { record } = await recordSyncs(() => mkdirDurably(runDir));
  const parents = ['', 'runs', 'runs/run-1'].map((d) => path.join(dir, 'artifacts', d));
  assert.deepEqual(record.missing(parents, false), []);
  assert.ok(!record.synced(dir), 'the existing grandparent gained no entry, so it is not synced');
  const again = await recordSyncs(() => mkdirDurably(runDir));
  assert.equal(again.record.inodes.size, 0, 'an existing directory costs no sync');
});

test('the spy sees what was not synced', async () => {
  const file = path.join(dir, 'not-synced.json');
  const { record } = await recordSyncs(async () => writeFileSync(file, '{}'));
  assert.deepEqual(record.missing([file]), [file, dir]);
});
