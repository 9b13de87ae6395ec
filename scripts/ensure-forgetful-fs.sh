#!/usr/bin/env bash
# Builds forgetful-fs (scripts/forgetfulFs/, a FUSE filesystem that forgets unsynced writes on a power
# cut) and prints its absolute path on stdout (progress goes to stderr). Go fetches go-fuse from the
# module proxy, checked against go.sum. The build is keyed by a digest of the sources, so an edit
# builds afresh and an unchanged tree reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cacheDir.sh
say() { echo "[forgetful-fs] $*" >&2; }
src=scripts/forgetfulFs
digest=$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | sha256sum | cut -c1-16)
dir="$PIVOT_MINER_CACHE/forgetful-fs-$digest"
bin="$dir/forgetful-fs"
if [ -x "$bin" ] && [ -f "$dir/.complete" ]; then echo "$bin"; exit 0; fi
cache_lock "forgetful-fs-$digest"
# Another run may have built it while this one waited for the lock.
if [ -x "$bin" ] && [ -f "$dir/.complete" ]; then echo "$bin"; exit 0; fi
command -v go >/dev/null 2>&1 || { say "Go is missing; install Go 1.22 or later to build $src"; exit 1; }
[ -c /dev/fuse ] || { say "/dev/fuse is missing: this machine cannot mount FUSE filesystems"; exit 1; }
say "building $src into $dir (first run only)"
mkdir -p "$dir"
(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" .) >&2
mv "$bin.tmp" "$bin"
touch "$dir/.complete"
echo "$bin"
