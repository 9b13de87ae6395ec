#!/usr/bin/env bash
# `npm run demo`: the main job end to end on the embedded default. Builds the Temporal CLI on the
# first run, then runs the pipeline; the last line printed is the absolute path of pivots.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm install --no-audit --no-fund
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)"
export TEMPORAL_BIN
exec node bin/pivot-miner.js demo "$@"
