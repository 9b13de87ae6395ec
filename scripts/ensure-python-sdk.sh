#!/usr/bin/env bash
# Prints the path of a Python interpreter with Temporal's Python SDK (`temporalio`), creating a
# project-local virtual environment in .state/pyenv on first use (a clean clone needs only python3).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.state/pyenv
if ! "$venv/bin/python" -c 'import temporalio' >/dev/null 2>&1; then
  mkdir -p .state
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'temporalio>=1.7,<2' >&2
fi
echo "$PWD/$venv/bin/python"
