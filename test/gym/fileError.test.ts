import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { writeFileDurably } from '../../gym/durable';
import { namedFileError } from '../../gym/fileError';
import { JsonlWriter } from '../../gym/jsonl';
import { StagedJsonlFile } from '../../gym/stagedJsonl';

// A full disk must fail a step with an error that names the file and the errno, and must leave what
// was already published as it was. A 64 KiB tmpfs is a disk that really fills.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-full-disk-'));
const LINE = `${JSON.stringify({ text: 'x'.repeat(1000) })}\n`;

before(() => execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]));
after(() => {
  execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Waits until the tmpfs has room again: a writer that failed closes its descriptor asynchronously,
 * and an unlinked file's blocks are only freed then.
 */
async function roomBack(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (statfsSync(dir).bavail * statfsSync(dir).bsize < 16 * LINE.length && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Runs `fill` and returns what it threw (it must throw). */
async function failure(fill: () => Promise<void>): Promise<NodeJS.ErrnoException> {
  try {
    await fill();
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  assert.fail('the disk never filled');
}

test('an errno error gains the file in its message and keeps its code', () => {
  const raw = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', errno: -5, syscall: 'fsync' });
  const named = namedFileError(raw, '/runs/a/rollouts.jsonl') as NodeJS.ErrnoException;
  assert.equal(named.message, '/runs/a/rollouts.jsonl: EIO: i/o error, fsync');
  assert.deepEqual([named.code, named.errno, named.syscall], ['EIO', -5, 'fsync']);
  assert.equal(namedFileError(named, '/runs/a/rollouts.jsonl'), named, 'named once');
  const plain = new Error('not a file error');
  assert.equal(namedFileError(plain, '/x'), plain);
});

test('a shard writer on a full disk names its file and ENOSPC', async () => {
  const file = path.join(dir, 'rollouts.chunk-0000.jsonl');
  const writer = await JsonlWriter.open(file);
  const err = await failure(async () => {
    for (let i = 0; i < 200; i++) await writer.writeLine(LINE);
    await writer.close();
  });
  assert.equal(err.code, 'ENOSPC');
  assert.match(err.message, new RegExp(`^${file}: ENOSPC`));
  rmSync(file);
  await roomBack();
});

test('a published file stays whole when its replacement hits a full disk', async () => {
  const file = path.join(dir, 'pivots.jsonl');
  writeFileSync(file, LINE);
  const staged = new StagedJsonlFile(file);
  const err = await failure(async () => {
    for (let i = 0; i < 200; i++) await staged.writeLine(LINE);
    await staged.commit();
  });
  await staged.abort();
  assert.equal(err.code, 'ENOSPC');
  assert.match(err.message, new RegExp(`^${file}\\.tmp: ENOSPC`));
  assert.equal(readFileSync(file, 'utf8'), LINE, 'the published file is untouched');
  rmSync(file);
  await roomBack();
});

test('a file written whole on a full disk names its temporary file', async () => {
  const file = path.join(dir, 'run_summary.json');
  const err = await failure(() => writeFileDurably(file, 'x'.repeat(200_000)));
  assert.equal(err.code, 'ENOSPC');
  assert.match(err.message, new RegExp(`^${file}\\.tmp: ENOSPC`));
});
