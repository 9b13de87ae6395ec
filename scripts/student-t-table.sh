#!/usr/bin/env bash
# Writes gym/rewardProfile/studentT975.json: Student's t 0.975 quantile for 1..1000 degrees of
# freedom as scipy (NeMo Gym 0.7.0's `stats.t.interval(0.95, ...)`) computes it, so the confidence
# intervals pivot-miner writes equal NeMo Gym's to the last bit. scipy's quantile is a Halley step
# on Boost's incomplete beta, a couple of ulps from the exact value; a value table of it is the only
# way to its bits without re-implementing Boost. Run once per scipy upgrade.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash scripts/ensure-nemo-gym.sh 0.7.0)"
"$bin/python" - <<'PY' > gym/rewardProfile/studentT975.json
import json
from scipy import special
# scipy's interval asks for the (1 + 0.95) / 2 quantile; the lower end is its negation.
print(json.dumps([float(special.stdtrit(df, (1 + 0.95) / 2)) for df in range(1, 1001)]))
PY
