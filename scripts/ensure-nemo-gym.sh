#!/usr/bin/env bash
# Prints the bin directory of a virtual environment with NeMo Gym 0.4.0 (ng_run, ng_collect_rollouts,
# ng_reward_profile, ng_prepare_data, gym) and uv, creating it once in the build cache.
# NeMo Gym 0.4.0 needs Python >= 3.12: python3.12 on PATH, else pyenv's 3.12.
# ng_run builds one uv venv per server; callers must export UV_PYTHON_DOWNLOADS=never and put a
# Python 3.12 on PATH, or uv tries to download an interpreter, which this network refuses.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[nemo-gym] $*" >&2; }
NEMO_GYM_VERSION=0.4.0
UV_VERSION=0.9.7
venv="$PIVOT_MINER_CACHE/nemo-gym-$NEMO_GYM_VERSION"
cache_lock "nemo-gym-$NEMO_GYM_VERSION"
if [ -f "$venv/.complete" ]; then echo "$venv/bin"; exit 0; fi
# pyenv's shim for python3.12 is on PATH yet fails unless 3.12 is selected, so each candidate is run.
py=""
for cand in "$(command -v python3.12 || true)" "$HOME"/.pyenv/versions/3.12.*/bin/python3.12 /root/.pyenv/versions/3.12.*/bin/python3.12; do
  if [ -x "$cand" ] && "$cand" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then py="$cand"; break; fi
done
if [ -z "$py" ]; then
  say "NeMo Gym $NEMO_GYM_VERSION needs Python >= 3.12; none found (python3.12 on PATH or pyenv 3.12)"; exit 1
fi
say "installing nemo-gym==$NEMO_GYM_VERSION and uv==$UV_VERSION with $py into $venv (first run only, ~4 min)"
rm -rf "$venv" && "$py" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet "nemo-gym==$NEMO_GYM_VERSION" "uv==$UV_VERSION" >&2
ln -sf "$py" "$venv/bin/python3.12"
touch "$venv/.complete"
say "installed $venv"
echo "$venv/bin"
