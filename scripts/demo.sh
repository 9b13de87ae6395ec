#!/usr/bin/env bash
# `npm run demo`: the main job end to end on the embedded default. Installs the npm packages and the
# Temporal CLI on the first run, then runs the pipeline; the last line printed is the absolute path
# of pivots.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
npm run --silent build
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)"
export TEMPORAL_BIN
exec node bin/pivot-miner.js demo "$@"
