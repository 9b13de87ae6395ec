// Runs a CommonJS bundle with V8's code cache: compiling a bundle of a megabyte is most of a short
// command's start-up. The build makes the cache (scripts/build.ts runs the command once with
// PIVOT_MINER_WRITE_CODE_CACHE=1, and the cache is written at that run's exit so it holds every
// function the run compiled, not only the top level). Other runs only read it: a missing cache, or
// one V8 rejects (another Node version), costs a compile and nothing else.
'use strict';
const fs = require('node:fs');
const { createRequire } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

function runWithCodeCache(bundleFile, cacheFile) {
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // On the first line, so line numbers in stack traces stay the bundle's.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundleFile, 'utf8')}\n})`;
  const script = new vm.Script(wrapped, { filename: bundleFile, cachedData });
  if (process.env.PIVOT_MINER_WRITE_CODE_CACHE === '1') {
    process.once('exit', () => fs.writeFileSync(cacheFile, script.createCachedData()));
  }
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, path.dirname(bundleFile));
  return module.exports;
}

module.exports = { runWithCodeCache };
