"""Throughput anchor for scripts/bench/verifier.ts: NeMo Gym's own verifier code, timed in Python.

Runs inside the NeMo Gym 0.4.0 venv. For each vector it does what the
single_step_tool_use_with_argument_comparison server's verify() does once FastAPI has parsed the
request: extract_tool_call_or_text, then ToolCallComparator(config).compare_tool_call for a
function_call, or the message rule. Building the request and response models is left out, as the
TypeScript side is timed from already-parsed objects too. Prints one JSON line.

Usage: python verifier_anchor.py VECTORS.jsonl SECONDS WARMUP_PASSES [STRIDE]

Times whole passes until SECONDS have gone by (at least one), so that the TypeScript side can time
a window of the same length right after it. With STRIDE, only every STRIDE-th of those vectors is
timed (the TypeScript side takes the same ones).
"""

import json
import statistics
import sys
import time
from types import SimpleNamespace

from resources_servers.single_step_tool_use_with_argument_comparison.common.response_utils import (
    extract_tool_call_or_text,
)
from resources_servers.single_step_tool_use_with_argument_comparison.common.verification_utils import (
    ExpectedFunctionCall,
    ExpectedMessage,
    StepRewardCategory,
    ToolCallComparator,
    ToolCallComparatorConfig,
)

# 0.4.0 knows these two expected_action types; batch vectors are left out on both sides.
SUPPORTED = {"message": ExpectedMessage, "function_call": ExpectedFunctionCall}


def as_attributes(value):
    """The response as verify() reads it (attribute access), without validating the Responses API
    union, which in 0.4.0 rejects item types the vectors contain (mcp_call, custom_tool_call)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: as_attributes(item) for key, item in value.items()})
    if isinstance(value, list):
        return [as_attributes(item) for item in value]
    return value


def verify(expected_action, response, config):
    extracted = extract_tool_call_or_text(response)
    if extracted is None:
        return 0.0, StepRewardCategory.NO_ACTION_FOUND
    if expected_action.type == "function_call":
        if extracted.type == "function_call":
            return ToolCallComparator(config=config).compare_tool_call(expected_action, extracted)
        return 0.0, StepRewardCategory.NO_EXPECTED_TOOL_CALL
    if extracted.type == "output_text":
        return 1.0, StepRewardCategory.EXPECTED_CHAT_MESSAGE_FOUND
    return 0.0, StepRewardCategory.NO_EXPECTED_CHAT_MESSAGE


def main() -> None:
    path, seconds, warmup = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    stride = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    cases = []
    with open(path) as f:
        for line in f:
            vector = json.loads(line)
            model = SUPPORTED.get(vector["expected_action"]["type"])
            if model is None:
                continue
            cases.append(
                (
                    model(**vector["expected_action"]),
                    as_attributes(vector["response"]),
                    ToolCallComparatorConfig(**vector["config"]),
                    (vector["reward"], vector["category"]),
                )
            )

    cases = cases[::stride]

    agree = 0
    errors = 0
    for expected_action, response, config, recorded in cases:
        try:
            reward, category = verify(expected_action, response, config)
        except Exception:  # noqa: BLE001 - the anchor only counts where 0.4.0 itself raises
            errors += 1
            continue
        agree += (reward, category.name) == recorded

    def one_pass() -> None:
        for expected_action, response, config, _ in cases:
            try:
                verify(expected_action, response, config)
            except Exception:  # noqa: BLE001
                pass

    for _ in range(warmup):
        one_pass()
    rates, cpu_rates = [], []
    until = time.perf_counter() + seconds
    while not rates or time.perf_counter() < until:
        wall, cpu = time.perf_counter(), time.process_time()
        one_pass()
        rates.append(len(cases) / (time.perf_counter() - wall))
        cpu_rates.append(len(cases) / (time.process_time() - cpu))
    print(
        json.dumps(
            {
                "cases": len(cases),
                "rates": rates,
                "median": statistics.median(rates),
                "cpu_rates": cpu_rates,
                "agree": agree,
                "errors": errors,
            }
        )
    )


if __name__ == "__main__":
    main()
