#!/usr/bin/env bash
# Writes two tables of numbers NeMo Gym 0.7.0's repeat-level metrics take from Python's libraries,
# so the statistics pivot-miner writes equal NeMo Gym's to the last bit. Run once per scipy (or
# glibc) upgrade of the 0.7.0 venv.
# - gym/rewardProfile/studentT975.json: Student's t 0.975 quantile for 1..1000 degrees of freedom,
#   as scipy's `stats.t.interval(0.95, ...)` computes it. scipy's quantile is a Halley step on Boost's
#   incomplete beta, a couple of ulps from the exact value; a value table is the only way to its bits
#   without re-implementing Boost.
# - gym/rewardProfile/powHalf.json: the n below 2,000,000 whose `n ** 0.5` (glibc's pow) is not the
#   correctly rounded square root, by which neighbour it is instead (standard errors divide by it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash scripts/ensure-nemo-gym.sh 0.7.0)"
"$bin/python" - <<'PY'
import json, math
from scipy import special

with open("gym/rewardProfile/studentT975.json", "w") as f:
    # scipy's interval asks for the (1 + 0.95) / 2 quantile; the lower end is its negation.
    json.dump([float(special.stdtrit(df, (1 + 0.95) / 2)) for df in range(1, 1001)], f)
    f.write("\n")

up, down = [], []
for n in range(1, 2_000_000):
    p, s = n**0.5, math.sqrt(n)
    if p == s:
        continue
    assert p in (math.nextafter(s, math.inf), math.nextafter(s, -math.inf)), n
    (up if p > s else down).append(n)
with open("gym/rewardProfile/powHalf.json", "w") as f:
    json.dump({"limit": 2_000_000, "up": up, "down": down}, f)
    f.write("\n")
PY
npx prettier --write gym/rewardProfile/studentT975.json gym/rewardProfile/powHalf.json >/dev/null
