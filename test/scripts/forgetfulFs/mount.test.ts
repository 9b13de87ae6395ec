import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ForgetfulMount, forgetfulFsBinary, isMounted, type MountDirs } from '../../../scripts/forgetfulFs/mount';

// forgetful-fs's power-cut model (LazyFS's): file content reverts to its last fsync, and a directory's
// entries to its last fsync; and its disk-full faults. Each test mounts a fresh filesystem, acts on it
// through the mount, cuts the power and reads what the backing directory kept.

let binary: string;
let root: string;
const mounts: ForgetfulMount[] = [];

before(() => {
  binary = forgetfulFsBinary();
  root = mkdtempSync(path.join(os.tmpdir(), 'forgetful-fs-test-'));
});

after(async () => {
  for (const m of mounts) await m.unmount();
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
async function mount(seed: Record<string, string> = {}): Promise<{ fs: ForgetfulMount; dirs: MountDirs }> {
  const base = path.join(root, String(counter++));
  const dirs = {
    backing: path.join(base, 'backing'),
    mountPoint: path.join(base, 'mnt'),
    control: path.join(base, 'ctl'),
  };
  mkdirSync(dirs.backing, { recursive: true });
  for (const [name, text] of Object.entries(seed)) writeFileSync(path.join(dirs.backing, name), text);
  const fs = await ForgetfulMount.start(dirs, binary);
  mounts.push(fs);
  return { fs, dirs };
}

function writeFile(file: string, text: string, sync: boolean, flags = 'w'): void {
  const fd = openSync(file, flags);
  writeSync(fd, text);
  if (sync) fsyncSync(fd);
  closeSync(fd);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

const read = (dir: string, name: string) => readFileSync(path.join(dir, name), 'utf8');

test('an unsynced write is lost on a cut; a fsynced one is kept', async () => {
  const { fs, dirs } = await mount({ 'kept.txt': 'before\n' });
  const m = dirs.mountPoint;
  writeFile(path.join(m, 'kept.txt'), 'line 1\n', true, 'a');
  writeFile(path.join(m, 'kept.txt'), 'line 2\n', false, 'a');
  writeFile(path.join(m, 'lost.txt'), 'never synced\n', false);
  syncDir(m);
  assert.equal(read(m, 'kept.txt'), 'before\nline 1\nline 2\n', 'reads pass through before the cut');
  await fs.cut();
  assert.equal(isMounted(m), false);
  assert.equal(read(dirs.backing, 'kept.txt'), 'before\nline 1\n');
  // The entry was made durable by the directory fsync, its content never was.
  assert.equal(read(dirs.backing, 'lost.txt'), '');
});

test('a rename without a directory fsync is reverted; with one it is kept', async () => {
  const { fs, dirs } = await mount({ 'published.json': 'old\n' });
  const m = dirs.mountPoint;
  mkdirSync(path.join(m, 'a'));
  mkdirSync(path.join(m, 'b'));
  syncDir(m);
  for (const dir of ['a', 'b']) {
    writeFile(path.join(m, dir, 'x.tmp'), `new ${dir}\n`, true);
    syncDir(path.join(m, dir));
  }
  renameSync(path.join(m, 'a', 'x.tmp'), path.join(m, 'a', 'x'));
  renameSync(path.join(m, 'b', 'x.tmp'), path.join(m, 'b', 'x'));
  syncDir(path.join(m, 'b'));
  writeFile(path.join(m, 'published.json.tmp'), 'new\n', true);
  renameSync(path.join(m, 'published.json.tmp'), path.join(m, 'published.json'));
  await fs.cut();
  assert.deepEqual(readdirSync(path.join(dirs.backing, 'a')), ['x.tmp']);
  assert.deepEqual(readdirSync(path.join(dirs.backing, 'b')), ['x']);
  assert.equal(read(dirs.backing, 'b/x'), 'new b\n');
  // The replaced file comes back whole, and the temporary name never became durable.
  assert.deepEqual(readdirSync(dirs.backing).sort(), ['a', 'b', 'published.json']);
  assert.equal(read(dirs.backing, 'published.json'), 'old\n');
});

test('create, unlink, mkdir and symlink revert unless their directory was fsynced', async () => {
  const { fs, dirs } = await mount({ 'gone.txt': 'unlinked\n', 'stays.txt': 'here\n' });
  const m = dirs.mountPoint;
  unlinkSync(path.join(m, 'gone.txt'));
  mkdirSync(path.join(m, 'dir'));
  symlinkSync('stays.txt', path.join(m, 'link'));
  writeFile(path.join(m, 'dir', 'inner.txt'), 'inner\n', true);
  syncDir(path.join(m, 'dir'));
  await fs.cut();
  assert.deepEqual(readdirSync(dirs.backing).sort(), ['gone.txt', 'stays.txt']);
  assert.equal(read(dirs.backing, 'gone.txt'), 'unlinked\n');

  const again = await ForgetfulMount.start(dirs, binary);
  mounts.push(again);
  unlinkSync(path.join(m, 'gone.txt'));
  mkdirSync(path.join(m, 'dir'));
  symlinkSync('stays.txt', path.join(m, 'link'));
  writeFile(path.join(m, 'dir', 'inner.txt'), 'inner\n', true);
  syncDir(path.join(m, 'dir'));
  syncDir(m);
  await again.cut();
  assert.deepEqual(readdirSync(dirs.backing).sort(), ['dir', 'link', 'stays.txt']);
  assert.equal(readlinkSync(path.join(dirs.backing, 'link')), 'stays.txt');
  assert.equal(read(dirs.backing, 'dir/inner.txt'), 'inner\n');
});

test('a dangling symlink is still an entry of its own', async () => {
  const { dirs } = await mount({ 'target.jsonl': 'rows\n' });
  const m = dirs.mountPoint;
  symlinkSync(path.join(m, 'target.jsonl'), path.join(m, 'link.jsonl'));
  renameSync(path.join(m, 'target.jsonl'), path.join(m, 'moved.jsonl'));
  assert.equal(lstatSync(path.join(m, 'link.jsonl')).isSymbolicLink(), true);
  rmSync(path.join(m, 'link.jsonl'));
  assert.deepEqual(readdirSync(m), ['moved.jsonl']);
});

test('a full disk returns ENOSPC, then EIO, and takes writes again once freed', async () => {
  const { fs, dirs } = await mount();
  const file = path.join(dirs.mountPoint, 'big.jsonl');
  await fs.fill(10, 2);
  const fd = openSync(file, 'w');
  try {
    assert.equal(writeSync(fd, 'abcdefgh'), 8);
    assert.equal(writeSync(fd, 'ijklmnop'), 2, 'a short write when the room runs out');
    const errors: string[] = [];
    for (let i = 0; i < 3; i++) {
      assert.throws(
        () => writeSync(fd, 'qrst'),
        (err: NodeJS.ErrnoException) => (errors.push(err.code!), true),
      );
    }
    // The kernel may retry a short write's rest itself, so the caller sees one or both ENOSPCs.
    assert.match(errors.join(' '), /^(ENOSPC )+EIO( EIO)*$/);
    assert.throws(() => fsyncSync(fd), { code: 'EIO' });
    await fs.free();
    assert.equal(writeSync(fd, 'uv'), 2);
  } finally {
    closeSync(fd);
  }
  assert.equal(readFileSync(file, 'utf8'), 'abcdefghijuv');
  const stats = await fs.stats();
  assert.equal(stats.enospc, 2);
  assert.ok(stats.eio >= 2, JSON.stringify(stats));
});

test('an armed trigger freezes the filesystem so a cut lands between two renames', async () => {
  const { fs, dirs } = await mount();
  const m = dirs.mountPoint;
  for (const name of ['one', 'two']) writeFile(path.join(m, `${name}.tmp`), `${name}\n`, true);
  syncDir(m);
  const { fired } = await fs.arm('before', 'rename', 2, '\\.tmp -> ');
  // A separate process does the renames, as a worker would, and syncs the directory after each.
  const script = `const fs = require('node:fs');
    for (const n of ['one', 'two']) {
      fs.renameSync(${JSON.stringify(m)} + '/' + n + '.tmp', ${JSON.stringify(m)} + '/' + n);
      const d = fs.openSync(${JSON.stringify(m)}, 'r'); fs.fsyncSync(d); fs.closeSync(d);
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  assert.match(await fired, /^rename two\.tmp -> two$/);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  await fs.cut();
  assert.deepEqual(readdirSync(dirs.backing).sort(), ['one', 'two.tmp']);
});

test('disarm drops a trigger not reached, and says when one fired after all', async () => {
  const { fs, dirs } = await mount();
  const m = dirs.mountPoint;
  await fs.arm('before', 'rename', 1, 'never-matches');
  assert.equal(await fs.disarm(), false);
  writeFile(path.join(m, 'a.tmp'), 'a\n', true);
  renameSync(path.join(m, 'a.tmp'), path.join(m, 'a'));
  const { fired } = await fs.arm('after', 'write', 1, '^b$');
  const child = spawn(process.execPath, ['-e', `require('node:fs').writeFileSync(${JSON.stringify(m)} + '/b', 'b')`], {
    stdio: 'ignore',
  });
  assert.match(await fired, /^write b$/);
  assert.equal(await fs.disarm(), true, 'frozen at the point: only a cut lets the host go on');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  await fs.cut();
});

test('a clean unmount keeps everything and leaves no mount behind', async () => {
  const { fs, dirs } = await mount();
  writeFile(path.join(dirs.mountPoint, 'unsynced.txt'), 'kept\n', false);
  await fs.unmount();
  assert.equal(isMounted(dirs.mountPoint), false);
  assert.equal(read(dirs.backing, 'unsynced.txt'), 'kept\n');
  assert.equal(existsSync(`${dirs.backing}.durable`), false);
});

/** Whether process `pid` sees a mount at `mountPoint` in a mount namespace other than ours. */
function mountedElsewhere(pid: number, mountPoint: string): boolean {
  try {
    if (readlinkSync(`/proc/${pid}/ns/mnt`) === readlinkSync('/proc/self/ns/mnt')) return false;
    return readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .some((line) => line.split(' ')[4] === mountPoint);
  } catch {
    return false;
  }
}

test('a cut ends while another mount namespace holds a copy of the mount', async () => {
  // A namespace made while the filesystem is mounted copies the mount (the fleet harness makes its
  // hosts so), and unmounting here does not reach the copy: the cut must not wait for it to go.
  const { fs, dirs } = await mount();
  writeFile(path.join(dirs.mountPoint, 'kept.txt'), 'synced\n', true);
  writeFile(path.join(dirs.mountPoint, 'lost.txt'), 'not synced\n', false);
  syncDir(dirs.mountPoint);
  const other = spawn('unshare', ['--mount', '--propagation', 'private', 'sleep', '120'], { stdio: 'ignore' });
  try {
    for (let tries = 0; !mountedElsewhere(other.pid!, dirs.mountPoint); tries++) {
      assert.ok(tries < 100, 'unshare never showed the mount in a namespace of its own');
      await sleep(100);
    }
    const t0 = Date.now();
    await fs.cut();
    assert.ok(Date.now() - t0 < 10_000, `the cut took ${Date.now() - t0} ms`);
  } finally {
    other.kill('SIGKILL');
  }
  assert.equal(read(dirs.backing, 'kept.txt'), 'synced\n');
  assert.equal(read(dirs.backing, 'lost.txt'), '');
});

test('a cut ends while a live process holds a file open on the mount', async () => {
  const { fs, dirs } = await mount();
  const fd = openSync(path.join(dirs.mountPoint, 'open.txt'), 'w');
  writeSync(fd, 'never synced\n');
  const t0 = Date.now();
  await fs.cut();
  assert.ok(Date.now() - t0 < 10_000, `the cut took ${Date.now() - t0} ms`);
  // The disk answers nothing after the cut, so even closing the descriptor fails.
  assert.throws(() => closeSync(fd), { code: 'ENOTCONN' });
  assert.equal(isMounted(dirs.mountPoint), false);
  assert.equal(existsSync(path.join(dirs.backing, 'open.txt')), false, 'its entry was never synced');
});
