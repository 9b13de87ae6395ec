import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { built, repoRoot, staleness } from '../../bin/built';
import { fixturesDir } from '../helpers/fixtures';

// What `npm run build` made (npm test builds before it runs anything): the bundles hold what their
// commands need and no more, nothing of ours is compiled or written at run time, a checkout edited
// since the build is refused, and package.json and the lock agree as `npm ci` requires.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runWithCodeCache } = require('../../bin/codeCache.js') as {
  runWithCodeCache: (bundle: string, cache: string) => unknown;
};
const validRows = path.join(fixturesDir, 'validator', '001_valid_function_call_rows.jsonl');

function cli(args: string[]) {
  const { status, stdout, stderr } = spawnSync(process.execPath, ['bin/pivot-miner.js', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return { status, stdout, stderr };
}

/** The source files a bundle holds, from the path comment esbuild writes above each one. */
const bundledSources = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^\/\/ ((?:gym|scripts|node_modules)\/\S+)$/gm)].map(
    (match) => match[1] as string,
  );

test('dist/ was built from this checkout', () => {
  assert.equal(staleness(), undefined);
});

test('the validator threads run the row checks alone; what starts them holds no dependency; the command holds its own', () => {
  const worker = bundledSources(built('validatorWorker.js'));
  assert.ok(worker.includes('gym/validator/fastRows.ts'), worker.join(', '));
  assert.deepEqual(
    worker.filter((source) => !source.startsWith('gym/')),
    [],
  );
  const early = bundledSources(built('validateEarly.js'));
  assert.ok(early.includes('scripts/commands/validateEarly.ts'), early.join(', '));
  assert.deepEqual(
    early.filter((source) => source.startsWith('node_modules/')),
    [],
  );
  assert.ok(bundledSources(built('validate.js')).some((source) => source.startsWith('node_modules/zod/')));
});

test('the CLI bundle leaves packages to node_modules and holds every layer of ours', () => {
  const sources = bundledSources(built('cli.js'));
  assert.deepEqual(
    sources.filter((source) => source.startsWith('node_modules/')),
    [],
  );
  assert.ok(sources.includes('scripts/cli.ts') && sources.some((source) => source.startsWith('gym/')));
});

test('the client bundle (package main) leaves packages to node_modules and holds no workflow or activity', () => {
  const sources = [...readFileSync(built('client.js'), 'utf8').matchAll(/^\/\/ ([\w-]+)\/\S+$/gm)].map((m) => m[1]);
  assert.ok(sources.includes('client') && sources.includes('contracts'), sources.join(', '));
  assert.deepEqual(
    [...new Set(sources)].filter((folder) => !['client', 'contracts', 'gym', 'workers'].includes(folder!)),
    [],
  );
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    exports: { '.': { types: string; default: string } };
  };
  assert.equal(path.resolve(repoRoot, manifest.exports['.'].default), built('client.js'));
  assert.match(readFileSync(path.resolve(repoRoot, manifest.exports['.'].types), 'utf8'), /startPivotMining/);
});

test('the built WebAssembly is strictJson.wat as wabt assembles it now', async () => {
  const wat = path.join(repoRoot, 'gym/validator/strictJson.wat');
  const wabt = await (await import('wabt')).default();
  const module = wabt.parseWat(wat, readFileSync(wat, 'utf8'), { simd: true });
  try {
    assert.deepEqual(readFileSync(built('strictJson.wasm')), Buffer.from(module.toBinary({}).buffer));
  } finally {
    module.destroy();
  }
});

test('validate reads the code cache the build made and writes nothing into dist/', () => {
  const cache = built('validate.code');
  const before = statSync(cache);
  assert.ok(before.size > 10_000, `${before.size} bytes`);
  const first = cli(['validate', '--path', validRows]);
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /^rows: 4\n/);
  assert.equal(statSync(cache).mtimeMs, before.mtimeMs);
});

test('a code cache V8 rejects costs only a compile', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pivot-miner-codecache-'));
  try {
    const bundle = path.join(dir, 'bundle.js');
    writeFileSync(bundle, 'module.exports = { answer: 6 * 7 };');
    const cache = path.join(dir, 'bundle.code');
    writeFileSync(cache, 'not a code cache');
    assert.deepEqual(runWithCodeCache(bundle, cache), { answer: 42 });
    assert.equal(readFileSync(cache, 'utf8'), 'not a code cache');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a checkout edited since its build is refused, naming the file and `npm run build`', () => {
  const probe = path.join(repoRoot, 'gym', `buildProbe${process.pid}.ts`);
  writeFileSync(probe, 'export {};\n');
  try {
    const refused = cli(['--help']);
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      new RegExp(`gym/buildProbe${process.pid}\\.ts was added since the last build; run \`npm run build\``),
    );
  } finally {
    rmSync(probe);
  }
  const fresh = cli(['--help']);
  assert.equal(fresh.status, 0, fresh.stderr);
});

test('the worker start-up path bundles nothing: it loads the built workflow bundle', () => {
  const source = readFileSync(path.join(repoRoot, 'workers/workflowBundle.ts'), 'utf8');
  assert.doesNotMatch(source, /bundleWorkflowCode|node:child_process|from 'esbuild'/);
  // The launcher loads dist/ and no TypeScript loader.
  assert.doesNotMatch(readFileSync(path.join(repoRoot, 'bin/pivot-miner.js'), 'utf8'), /tsx/);
});

type Lock = { packages: Record<string, Record<string, unknown>> };

/** How the lock's root entry differs from package.json where `npm ci` compares them. */
function lockDrift(manifest: Record<string, unknown>, lock: Lock): string[] {
  const root = lock.packages[''] ?? {};
  const drift = ['name', 'version', 'bin', 'dependencies', 'devDependencies', 'engines', 'license'].filter(
    (field) => JSON.stringify(root[field]) !== JSON.stringify(manifest[field]),
  );
  for (const name of Object.keys({ ...(manifest.dependencies as object), ...(manifest.devDependencies as object) })) {
    if (!lock.packages[`node_modules/${name}`]) drift.push(`node_modules/${name}`);
  }
  return drift;
}

const readJson = <T>(file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as T;

test('package.json and package-lock.json agree, as `npm ci` requires (else: npm install, commit the lock)', () => {
  assert.deepEqual(lockDrift(readJson('package.json'), readJson('package-lock.json')), []);
});

test('the lock check sees a drifted bin path and a dependency missing from the lock', () => {
  const manifest = readJson<Record<string, unknown>>('package.json');
  const lock = readJson<Lock>('package-lock.json');
  lock.packages['']!.bin = { 'pivot-miner': 'bin/pivot-miner.js' };
  delete lock.packages['node_modules/zod'];
  assert.deepEqual(lockDrift(manifest, lock), ['bin', 'node_modules/zod']);
});
