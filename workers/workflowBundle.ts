import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// The workflow code a worker runs, bundled by webpack in a short-lived child process: bundling in
// the worker itself leaves webpack's heap behind for the worker's whole life (idle RSS ~310 MB
// instead of ~175). Bundles are cached by a hash of the sources, so a restarted worker, or a second
// worker on the same checkout, skips webpack altogether.

const repoRoot = path.resolve(__dirname, '..');
const CACHE_DIR = path.join(repoRoot, 'node_modules', '.cache', 'pivot-miner-workflows');
/** Not project sources, or not reachable from workflow code. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.state', 'artifacts', 'test']);
const KEPT_BUNDLES = 4;

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) files.push(...(await sourceFiles(full)));
    } else if (entry.name.endsWith('.ts')) {
      files.push(full);
    }
  }
  return files;
}

/**
 * Every TypeScript source of the project (workflow code reaches contracts/ and gym/ too) and the
 * locked dependency versions: hashing all of them is a few milliseconds, and cannot miss an import.
 */
export async function workflowSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = [...(await sourceFiles(repoRoot)), path.join(repoRoot, 'package-lock.json'), path.join(repoRoot, 'tsconfig.json')].sort();
  for (const file of files) hash.update(path.relative(repoRoot, file)).update('\0').update(await readFile(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

function bundleInChild(outPath: string): Promise<void> {
  // NODE_OPTIONS tune the worker (heap caps, probes), not a bundler that exits in seconds.
  const { NODE_OPTIONS: _workerOnly, ...env } = process.env;
  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), __filename, outPath], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`bundling the workflows failed (${signal ?? `exit code ${code}`}); see the output above`)),
    );
  });
}

async function cacheDir(): Promise<{ dir: string; shared: boolean }> {
  try {
    await mkdir(CACHE_DIR, { recursive: true });
    return { dir: CACHE_DIR, shared: true };
  } catch {
    // A read-only checkout: bundle into a directory of this process's own, without a cache.
    return { dir: await mkdtemp(path.join(os.tmpdir(), 'pivot-miner-workflows-')), shared: false };
  }
}

/** The path of a bundle of workflows/ for `Worker.create({ workflowBundle: { codePath } })`. */
export async function workflowBundlePath(): Promise<string> {
  const { dir, shared } = await cacheDir();
  const codePath = path.join(dir, `${await workflowSourceHash()}.js`);
  try {
    await access(codePath);
    return codePath;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await bundleInChild(codePath);
  if (shared) await pruneBundles(dir);
  return codePath;
}

/**
 * Bundles of sources that have since changed are of no further use, but the newest few are kept: a
 * worker that started just before an edit may not have read its bundle yet.
 */
async function pruneBundles(dir: string): Promise<void> {
  const bundles = await Promise.all(
    (await readdir(dir)).filter((name) => name.endsWith('.js')).map(async (name) => ({ file: path.join(dir, name), mtimeMs: (await stat(path.join(dir, name))).mtimeMs })),
  );
  bundles.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { file } of bundles.slice(KEPT_BUNDLES)) await rm(file, { force: true });
}

async function writeBundle(outPath: string): Promise<void> {
  const { bundleWorkflowCode, DefaultLogger } = await import('@temporalio/worker');
  // Webpack's module list at INFO would fill every worker log; warnings and errors still show.
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: new DefaultLogger('WARN') });
  // Written whole under a private name first, so a worker starting beside this one never reads half a bundle.
  const partial = `${outPath}.${process.pid}.partial`;
  await writeFile(partial, code);
  await rename(partial, outPath);
}

if (require.main === module) {
  writeBundle(process.argv[2]!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
