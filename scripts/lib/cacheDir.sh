# Sourced by the ensure-* scripts: where long builds are cached. Outside the work tree on purpose,
# like Go's module cache, so a fresh clone (and CI's clean clone) reuses a build made once on this
# machine; every entry is keyed by its pinned version, so a pin change builds afresh.
PIVOT_MINER_CACHE="${PIVOT_MINER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pivot-miner}"
mkdir -p "$PIVOT_MINER_CACHE"

# Holds an exclusive lock on one cache entry until the calling script exits. Builds start with
# `rm -rf` of a half-made entry, so two scripts building the same entry at once (two test files, or
# a test beside a warm-up) would delete each other's work.
cache_lock() {
  exec {cache_lock_fd}>"$PIVOT_MINER_CACHE/.$1.lock"
  flock "$cache_lock_fd"
}
