#!/usr/bin/env node
// Runs the CLI that `npm run build` made in dist/. The `pivot-miner` command (bin/pivot-miner)
// starts it; `node bin/pivot-miner.js` runs the same commands with the environment left as it is.
// `validate` alone runs from a bundle of just its own modules: it is a short command measured
// process for process against NeMo Gym's Python validator, and loading the whole CLI (Temporal and
// all) takes longer than a small validation. Its worker threads load a bundle of the row-checking
// code alone, and on a large file they start first, on a guess of the job
// (scripts/commands/validateEarly.ts), so they check the file while the command loads.
'use strict';
const built = require('./built');

if (process.argv[2] === 'validate') {
  // Not checked against the sources: validate's start-up is what its benchmark measures, and a
  // stale validator is caught by `npm test`, which builds first.
  const workerScript = built.built('validatorWorker.js');
  const started = require(built.built('validateEarly.js')).startEarly(process.argv.slice(3), workerScript);
  require('./codeCache')
    .runWithCodeCache(built.built('validate.js'), built.built('validate.code'))
    .runValidateCli(process.argv, workerScript, started);
} else {
  try {
    built.assertBuilt();
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
  // A worker started without its heap flag has just been started again with it, in a child.
  if (process.argv[2] !== 'worker' || !require('./workerHeap').relaunchWorkerWithHeapLimit())
    require(built.built('cli.js'));
}
