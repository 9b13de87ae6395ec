// Loads a TypeScript entry as one CommonJS bundle made by esbuild (which tsx brings along), kept
// under node_modules/.cache and rebuilt whenever a checkout file it was built from changes size or
// mtime, or npm changes node_modules (which it records in node_modules/.package-lock.json: one stat
// instead of one per dependency file, some 180 for the validate bundle).
// One plain file skips tsx's compile-and-resolve step per module, which takes longer than a short
// `validate` run; the checkout still has no build step to forget.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const root = path.resolve(__dirname, '..');
const cacheDir = path.join(root, 'node_modules', '.cache', 'pivot-miner');

const stamp = (file) => {
  const stat = fs.statSync(path.join(root, file));
  return `${stat.size}:${stat.mtimeMs}`;
};

const DEPENDENCIES = 'node_modules/.package-lock.json';

/** The files whose stamps say whether a bundle of `inputs` is fresh. */
const watched = (inputs) => [...inputs.filter((file) => !file.startsWith('node_modules/')), DEPENDENCIES];

function isFresh(manifestFile) {
  let inputs;
  try {
    inputs = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    return Object.entries(inputs).every(([file, recorded]) => stamp(file) === recorded);
  } catch {
    return false;
  }
}

/** Written to a temporary name first, so a concurrent run never loads half a file. */
function writeAtomically(file, text) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

function build(entry, bundleFile, manifestFile) {
  const esbuild = require(require.resolve('esbuild', { paths: [path.dirname(require.resolve('tsx/package.json'))] }));
  const result = esbuild.buildSync({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const inputs = Object.fromEntries(watched(Object.keys(result.metafile.inputs)).map((file) => [file, stamp(file)]));
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.rmSync(codeCacheFile(bundleFile), { force: true });
  writeAtomically(bundleFile, result.outputFiles[0].text);
  writeAtomically(manifestFile, JSON.stringify(inputs));
}

/** The bundle of `entry` (relative to the checkout root, e.g. 'scripts/commands/validateMain.ts'),
 * made or remade if stale; undefined where it cannot be made (no esbuild, a read-only node_modules). */
function bundledFile(entry) {
  const name = entry.replace(/[^A-Za-z0-9]+/g, '_');
  const bundleFile = path.join(cacheDir, `${name}.js`);
  const manifestFile = path.join(cacheDir, `${name}.inputs.json`);
  if (isFresh(manifestFile)) return bundleFile;
  try {
    build(entry, bundleFile, manifestFile);
    return bundleFile;
  } catch {
    return undefined;
  }
}

/** The WebAssembly binary of `entry`, a WebAssembly text file (relative to the checkout root),
 * assembled by watToWasm.js when its cached binary is missing or stale. */
exports.wasmFromWat = (entry) => {
  const name = entry.replace(/[^A-Za-z0-9]+/g, '_');
  const wasmFile = path.join(cacheDir, `${name}.wasm`);
  const manifestFile = path.join(cacheDir, `${name}.inputs.json`);
  if (isFresh(manifestFile)) {
    try {
      return fs.readFileSync(wasmFile);
    } catch {
      // Removed since: assembled again below.
    }
  }
  const binary = execFileSync(process.execPath, [path.join(__dirname, 'watToWasm.js'), path.join(root, entry)]);
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    writeAtomically(wasmFile, binary);
    writeAtomically(manifestFile, JSON.stringify(Object.fromEntries(watched([entry]).map((file) => [file, stamp(file)]))));
  } catch {
    // A read-only cache only costs the next run the assembly.
  }
  return binary;
};

/** A file node can load for `entry`: its bundle, or else its source (which needs tsx/cjs). */
exports.loadableFile = (entry) => bundledFile(entry) ?? path.join(root, entry);

const codeCacheFile = (bundleFile) => bundleFile.replace(/\.js$/, '.code');

/** Runs a bundle as CommonJS with V8's code cache: compiling a bundle of a megabyte is most of a
 * short command's start-up. The cache is written at exit when missing or stale (V8 rejects one made
 * from other source), so it holds every function the run compiled, not only the top level. */
function runBundle(bundleFile) {
  const cacheFile = codeCacheFile(bundleFile);
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // On the first line, so line numbers in stack traces stay the bundle's.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundleFile, 'utf8')}\n})`;
  const script = new vm.Script(wrapped, { filename: bundleFile, cachedData });
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('exit', () => {
      try {
        writeAtomically(cacheFile, script.createCachedData());
      } catch {
        // A read-only cache only costs the next run its compile time.
      }
    });
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, path.dirname(bundleFile));
  return module.exports;
}

/** Loads `entry` from its bundle, or through tsx where the bundle cannot be made. */
exports.requireBundled = (entry) => {
  const file = exports.loadableFile(entry);
  if (!file.endsWith('.ts')) return runBundle(file);
  require('tsx/cjs');
  return require(file);
};
