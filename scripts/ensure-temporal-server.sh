#!/usr/bin/env bash
# Builds the Temporal server and its SQL schema tool from the Go module and prints the cache folder
# that holds them (progress goes to stderr). The folder has temporal-server, temporal-sql-tool and
# schema/ (the module's own SQL schema files, which temporal-sql-tool applies).
# The version is the server the pinned CLI's dev server embeds (`temporal --version` names it), so
# the fleet's cluster runs the same server code the tests run on the dev server. The module's
# go.mod names Go 1.26.8 and has no replace directive, so `go install` builds it as released.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[temporal-server] $*" >&2; }
TEMPORAL_SERVER_VERSION=v1.32.0

dir="$PIVOT_MINER_CACHE/temporal-server-$TEMPORAL_SERVER_VERSION-$(uname -m)"
cache_lock "$(basename "$dir")"
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi

command -v go >/dev/null 2>&1 || { say "Go is missing; the Temporal server is built from its Go module"; exit 1; }
say "building go.temporal.io/server@$TEMPORAL_SERVER_VERSION into $dir (first run only; slow on 2 cores)"
rm -rf "$dir" && mkdir -p "$dir/bin"
# nice: the build takes every core for many minutes on a host that others share.
GOBIN="$dir/bin" nice -n 10 go install \
  "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
  "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >&2
mv "$dir/bin/server" "$dir/temporal-server"
mv "$dir/bin/sql" "$dir/temporal-sql-tool"
rmdir "$dir/bin"
module=$(go list -m -f '{{.Dir}}' "go.temporal.io/server@$TEMPORAL_SERVER_VERSION")
cp -r "$module/schema/postgresql" "$dir/schema"
chmod -R u+w "$dir/schema"

# Both binaries must run here: a broken build fails now, not when a fleet scenario starts.
"$dir/temporal-server" --help >/dev/null 2>&1 || { say "$dir/temporal-server does not run"; exit 1; }
"$dir/temporal-sql-tool" --help >/dev/null 2>&1 || { say "$dir/temporal-sql-tool does not run"; exit 1; }
touch "$dir/.complete"
say "built $dir"
echo "$dir"
