#!/usr/bin/env bash
# Prints the bin directory of a virtual environment with NeMo Gym (ng_run, ng_collect_rollouts,
# ng_reward_profile, ng_prepare_data, gym), creating it once in the build cache. The version is the
# first argument: 0.4.0 (the default, which most of test/nemoGym/ checks against) or 0.7.0 (the
# release users install today).
# - 0.4.0 needs Python >= 3.12: python3.12 on PATH, else pyenv's 3.12. It also gets uv: ng_run builds
#   one uv venv per server; callers must export UV_PYTHON_DOWNLOADS=never and put a Python 3.12 on
#   PATH, or uv tries to download an interpreter, which this network refuses.
# - 0.7.0 declares Requires-Python >=3.13.14, which no Python on these machines meets. It installs
#   and runs on pyenv's 3.13.0 with pip's --ignore-requires-python, as users here do; docs/nemo-gym.md
#   says what a user with 3.13.14 or newer does instead (a plain install).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
NEMO_GYM_VERSION="${1:-0.4.0}"
say() { echo "[nemo-gym-$NEMO_GYM_VERSION] $*" >&2; }
case "$NEMO_GYM_VERSION" in
  0.4.0) want=3.12; packages=("nemo-gym==0.4.0" "uv==0.9.7"); pip_flags=() ;;
  0.7.0) want=3.13; packages=("nemo-gym==0.7.0"); pip_flags=(--ignore-requires-python) ;;
  *) say "unknown version (0.4.0 or 0.7.0)"; exit 2 ;;
esac
venv="$PIVOT_MINER_CACHE/nemo-gym-$NEMO_GYM_VERSION"
cache_lock "nemo-gym-$NEMO_GYM_VERSION"
if [ -f "$venv/.complete" ]; then echo "$venv/bin"; exit 0; fi
# pyenv's shims are on PATH yet fail unless a version is selected, so each candidate is run.
py=""
for cand in "$(command -v "python$want" || true)" "$HOME"/.pyenv/versions/"$want".*/bin/python"$want" /root/.pyenv/versions/"$want".*/bin/python"$want"; do
  if [ -x "$cand" ] && "$cand" -c "import sys; assert sys.version_info >= (${want/./, })" >/dev/null 2>&1; then py="$cand"; break; fi
done
if [ -z "$py" ]; then
  say "needs Python >= $want; none found (python$want on PATH or pyenv $want)"; exit 1
fi
say "installing ${packages[*]} with $py into $venv (first run only, 4-8 min)"
rm -rf "$venv" && "$py" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet "${pip_flags[@]}" "${packages[@]}" >&2
ln -sf "$py" "$venv/bin/python$want"
touch "$venv/.complete"
say "installed $venv"
echo "$venv/bin"
