#!/usr/bin/env bash
# Finds or builds the Temporal CLI and prints its absolute path on stdout (progress goes to stderr).
# Order: $TEMPORAL_BIN, `temporal` on PATH, $(go env GOPATH)/bin/temporal, else build it with go install.
# v1.5.1 is pinned because later tags carry a `replace` directive that `go install` refuses.
set -euo pipefail
say() { echo "[temporal-cli] $*" >&2; }

if [ -n "${TEMPORAL_BIN:-}" ]; then
  if [ -x "$TEMPORAL_BIN" ]; then say "using TEMPORAL_BIN=$TEMPORAL_BIN"; echo "$TEMPORAL_BIN"; exit 0; fi
  say "TEMPORAL_BIN=$TEMPORAL_BIN is not an executable file"; exit 1
fi
if command -v temporal >/dev/null 2>&1; then
  bin=$(command -v temporal); say "using $bin from PATH"; echo "$bin"; exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  say "the Temporal CLI is not installed and Go is missing, so it cannot be built."
  say "Install Go (https://go.dev/dl) or set TEMPORAL_BIN to an existing temporal binary."
  exit 1
fi
gobin="$(go env GOPATH)/bin/temporal"
if [ -x "$gobin" ]; then say "using $gobin"; echo "$gobin"; exit 0; fi
say "building the Temporal CLI: go install github.com/temporalio/cli/cmd/temporal@v1.5.1 (first run only, a few minutes)"
go install github.com/temporalio/cli/cmd/temporal@v1.5.1 >&2
say "built $gobin"
echo "$gobin"
