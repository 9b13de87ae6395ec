#!/usr/bin/env bash
# `npm run test:unit`: the fast tier — the pure NeMo Gym contracts (gym/), contracts/, the docs'
# config examples, and the activities' logic run in process against in-process fakes. No Temporal
# server, NeMo Gym or llama-server; it needs only `npm ci` (which builds dist/, whose validator
# WebAssembly gym/ reads).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
npm run --silent build
# Lint and formatting first: a style or floating-promise finding costs a minute, not the whole run.
npm run --silent lint
npm run --silent format:check
# Files that run NeMo Gym's Python or Chromium beside the pure checks stay in `npm test` alone.
mapfile -t files < <(find test/gym test/contracts test/activities test/docs test/scripts/build.test.ts -name '*.test.ts' | sort |
  grep -v -x -e test/gym/aggregateMetrics.test.ts -e test/gym/chatCompletions/requests.test.ts -e test/gym/report.test.ts -e test/activities/stage/aggregateMetrics.test.ts)
exec node --import tsx --test "${files[@]}"
