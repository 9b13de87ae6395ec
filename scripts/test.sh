#!/usr/bin/env bash
# Runs every test under test/ with node's built-in runner (TypeScript through tsx).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test --test-reporter=spec "${files[@]}"
