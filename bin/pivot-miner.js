#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout: tsx compiles on load, so there is no build step to forget.
// `validate` alone runs from a cached bundle of just its own modules: it is a short command measured
// process for process against NeMo Gym's Python validator, and loading the whole CLI through tsx
// (Temporal and all) takes seconds.
// Its worker threads load a bundle of the row-checking code alone (gym/validator/parallel.ts), and
// start first: a worker is ready in about the time the command takes to load, so a large file is
// read by two threads from the start.
if (process.argv[2] === 'validate') {
  const bundles = require('./cachedBundle');
  const workerScript = bundles.loadableFile('gym/validator/parallel.ts');
  const idleWorkers = workerScript.endsWith('.js') ? require(workerScript).startWorkers(earlyWorkerCount(process.argv.slice(3), require(workerScript).defaultThreads)) : [];
  bundles.requireBundled('scripts/commands/validateMain.ts').runValidateCli(process.argv, workerScript, idleWorkers);
} else if (process.argv[2] !== 'worker' || !require('./workerHeap').relaunchWorkerWithHeapLimit()) {
  // A worker started without its heap flag has just been started again with it, in a child.
  require('tsx/cjs');
  require('../scripts/cli.ts');
}

/** The workers the command will want, going by the plain `--path FILE` spelling and no `--threads`
 * (a guess; the command takes what it needs of them, and stops the rest). */
function earlyWorkerCount(args, defaultThreads) {
  if (args.some((arg) => arg.startsWith('--threads'))) return 0;
  const at = args.indexOf('--path');
  if (at === -1 || at + 1 >= args.length) return 0;
  try {
    return defaultThreads(require('node:fs').statSync(args[at + 1]).size) - 1;
  } catch {
    return 0;
  }
}
