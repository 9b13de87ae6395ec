#!/usr/bin/env bash
# `npm test`: every test, with node's built-in runner (TypeScript through tsx). Provisions what the
# tests need first: the Temporal CLI (built once with go install) and Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)"
export TEMPORAL_BIN
CHROMIUM_BIN="$(bash scripts/ensure-chromium.sh)"
export CHROMIUM_BIN
npx tsc --noEmit -p .
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test --test-timeout=900000 "${files[@]}"
