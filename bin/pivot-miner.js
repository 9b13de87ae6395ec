#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout: tsx compiles on load, so there is no build step to forget.
require('tsx/cjs');
require('../scripts/cli.ts');
