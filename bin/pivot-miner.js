#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout: tsx compiles on load, so there is no build step to forget.
// The `pivot-miner` command (bin/pivot-miner) starts it; `node bin/pivot-miner.js` runs the same
// commands with the environment left as it is.
// `validate` alone runs from a cached bundle of just its own modules: it is a short command measured
// process for process against NeMo Gym's Python validator, and loading the whole CLI through tsx
// (Temporal and all) takes seconds.
// Its worker threads load a bundle of the row-checking code alone (gym/validator/parallel.ts), and
// on a large file they start first, on a guess of the job (scripts/commands/validateEarly.ts), so
// they check the file while the command loads.
if (process.argv[2] === 'validate') {
  const bundles = require('./cachedBundle');
  const workerScript = bundles.loadableFile('gym/validator/parallel.ts');
  const started = workerScript.endsWith('.js') ? bundles.requireBundled('scripts/commands/validateEarly.ts').startEarly(process.argv.slice(3), workerScript) : undefined;
  bundles.requireBundled('scripts/commands/validateMain.ts').runValidateCli(process.argv, workerScript, started);
} else if (process.argv[2] !== 'worker' || !require('./workerHeap').relaunchWorkerWithHeapLimit()) {
  // A worker started without its heap flag has just been started again with it, in a child.
  require('tsx/cjs');
  require('../scripts/cli.ts');
}
