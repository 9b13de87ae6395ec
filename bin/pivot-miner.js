#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout: tsx compiles on load, so there is no build step to forget.
// `validate` alone runs from a cached bundle of just its own modules: it is a short command measured
// process for process against NeMo Gym's Python validator, and loading the whole CLI through tsx
// (Temporal and all) takes seconds.
// Its worker threads load a bundle of the row-checking code alone (gym/validator/parallel.ts).
if (process.argv[2] === 'validate') {
  const bundles = require('./cachedBundle');
  bundles.requireBundled('scripts/commands/validateMain.ts').runValidateCli(process.argv, bundles.loadableFile('gym/validator/parallel.ts'));
} else {
  require('tsx/cjs');
  require('../scripts/cli.ts');
}
