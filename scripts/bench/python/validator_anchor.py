"""Throughput anchor for scripts/bench/validator.ts: NeMo Gym's validate_pivot_dataset.py, timed.

Loads the reference script (from the NeMo Gym 0.4.0 sdist) as a module and times its
validate_file() on one JSONL file, the whole of what its CLI does apart from argument parsing and
printing the metrics block. Prints one JSON line.

Usage: python validator_anchor.py REFERENCE_SCRIPT JSONL PASSES WARMUP_PASSES [REQUIRE_FIELD...]
"""

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    script, path, passes, warmup = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    spec = importlib.util.spec_from_file_location("validate_pivot_dataset", script)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    args = argparse.Namespace(
        path=path,
        agent_ref=None,
        gym_repo=None,
        check_tool_names=True,
        require_field=sys.argv[5:],
        require_any_field=[],
    )

    rows = 0
    for _ in range(warmup):
        rows = reference.validate_file(args)["rows"]
    rates, cpu_rates = [], []
    for _ in range(passes):
        wall, cpu = time.perf_counter(), time.process_time()
        rows = reference.validate_file(args)["rows"]
        rates.append(rows / (time.perf_counter() - wall))
        cpu_rates.append(rows / (time.process_time() - cpu))
    print(json.dumps({"cases": rows, "rates": rates, "median": statistics.median(rates), "cpu_rates": cpu_rates}))


if __name__ == "__main__":
    main()
