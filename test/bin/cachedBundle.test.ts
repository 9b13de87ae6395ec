import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fixturesDir } from '../fixtures';

const bundles = createRequire(__filename)('../../bin/cachedBundle.js') as typeof import('../../bin/cachedBundle');
const repoRoot = path.resolve(__dirname, '../..');
const validRows = path.join(fixturesDir, 'validator', '001_valid_function_call_rows.jsonl');

function validate(): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(process.execPath, ['bin/pivot-miner.js', 'validate', '--path', validRows], { cwd: repoRoot, encoding: 'utf8' });
  return { status, stdout, stderr };
}

// `validate` starts a worker thread per extra core, each loading what loadableFile gives for the
// worker module: it must be a plain bundle of the row checks alone, not the CLI with zod and the rest.
/** The source files a bundle holds, from the path comment esbuild writes above each one. */
const bundledSources = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^\/\/ ((?:gym|scripts|node_modules)\/\S+)$/gm)].map((match) => match[1] as string);

test('the validator workers load a bundle of the row-checking modules alone, and start from one without dependencies', () => {
  const file = bundles.loadableFile('gym/validator/parallel.ts');
  assert.ok(file.endsWith('.js'), file);
  const sources = bundledSources(file);
  assert.ok(sources.includes('gym/validator/fastRows.ts'), sources.join(', '));
  assert.deepEqual(sources.filter((source) => !source.startsWith('gym/')), []);
  // What starts them before the command loads holds no dependency either (no commander, no zod).
  const early = bundledSources(bundles.loadableFile('scripts/commands/validateEarly.ts'));
  assert.ok(early.includes('scripts/commands/validateEarly.ts'), early.join(', '));
  assert.deepEqual(early.filter((source) => source.startsWith('node_modules/')), []);
  // The check that the command's bundle is what the method above reads: it does hold dependencies.
  const command = bundles.loadableFile('scripts/commands/validateMain.ts');
  assert.ok(bundledSources(command).some((source) => source.startsWith('node_modules/zod/')));
  assert.equal(path.dirname(file), path.dirname(command));
});

test('a bundle records the checkout files it was built from, and one stamp for all of node_modules', () => {
  const manifest = bundles.loadableFile('scripts/commands/validateMain.ts').replace(/\.js$/, '.inputs.json');
  const inputs = Object.keys(JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>);
  assert.ok(inputs.includes('scripts/commands/validate.ts') && inputs.includes('gym/validator.ts'), inputs.join(', '));
  assert.deepEqual(inputs.filter((input) => input.startsWith('node_modules/')), ['node_modules/.package-lock.json']);
});

test('validate keeps a V8 code cache beside its bundle, and a damaged one only costs a compile', () => {
  const first = validate();
  assert.equal(first.status, 0, first.stderr);
  const codeCache = bundles.loadableFile('scripts/commands/validateMain.ts').replace(/\.js$/, '.code');
  assert.ok(statSync(codeCache).size > 10_000);
  writeFileSync(codeCache, 'not a code cache');
  assert.deepEqual(validate(), first);
  assert.ok(statSync(codeCache).size > 10_000, 'a rejected cache is written again');
  assert.deepEqual(validate(), first);
});

test('a WebAssembly text file is assembled once, kept, and assembled again when its stamp no longer matches', () => {
  const entry = 'gym/validator/strictJson.wat';
  const binary = bundles.wasmFromWat(entry);
  assert.equal(binary.subarray(0, 4).toString('latin1'), '\0asm');
  assert.doesNotThrow(() => new WebAssembly.Module(binary));
  const cached = path.join(repoRoot, 'node_modules', '.cache', 'pivot-miner', 'gym_validator_strictJson_wat.wasm');
  assert.deepEqual(readFileSync(cached), binary);
  const manifest = cached.replace(/\.wasm$/, '.inputs.json');
  const stamps = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, string>;
  assert.deepEqual(Object.keys(stamps), [entry, 'node_modules/.package-lock.json']);
  const assembled = statSync(cached).mtimeMs;
  assert.deepEqual(bundles.wasmFromWat(entry), binary);
  assert.equal(statSync(cached).mtimeMs, assembled, 'a fresh binary is read, not assembled again');
  writeFileSync(manifest, JSON.stringify({ ...stamps, [entry]: 'edited since' }));
  assert.deepEqual(bundles.wasmFromWat(entry), binary);
  assert.notEqual(statSync(cached).mtimeMs, assembled, 'a stale binary is assembled again');
  assert.deepEqual(JSON.parse(readFileSync(manifest, 'utf8')), stamps);
});
