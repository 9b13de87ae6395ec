#!/usr/bin/env bash
# Prints the path of a Python interpreter with Temporal's Python SDK (`temporalio`), in a virtual
# environment in the build cache made on first use (a clean clone needs only python3). The pin is
# at least 1.16, whose temporalio.envconfig reads the TEMPORAL_* variables and profiles the workers
# read, so docs/python.md's examples connect wherever a worker does.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
TEMPORALIO_VERSION=1.35.0
venv="$PIVOT_MINER_CACHE/temporalio-py-$TEMPORALIO_VERSION"
cache_lock "$(basename "$venv")"
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "temporalio==$TEMPORALIO_VERSION" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
