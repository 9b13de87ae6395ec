#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout: tsx compiles on load, so there is no build step to forget.
// `validate` alone runs from a cached bundle of just its own modules: it is a short command measured
// process for process against NeMo Gym's Python validator, and loading the whole CLI through tsx
// (Temporal and all) takes seconds.
if (process.argv[2] === 'validate') {
  require('./cachedBundle').requireBundled('scripts/commands/validateMain.ts').runValidateCli(process.argv);
} else {
  require('tsx/cjs');
  require('../scripts/cli.ts');
}
