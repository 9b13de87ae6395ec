"""Start a pivot-miner run from Python by workflow type name and JSON input, and wait for its dataset.

Needs only Temporal's Python SDK (`pip install temporalio`); the input shape is published as
schemas/pivot_mining_input.schema.json. Connection settings come from the same environment
variables as the pivot-miner workers: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, PIVOT_MINER_TASK_QUEUE.

    python start_pivot_mining.py configs/demo.yaml [workflow-id]
"""

import asyncio
import json
import os
import sys

from temporalio.client import Client


async def main() -> None:
    config_path = sys.argv[1] if len(sys.argv) > 1 else "configs/demo.yaml"
    workflow_id = sys.argv[2] if len(sys.argv) > 2 else "pivot-mining-from-python"
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
    )
    # Started by type name: the platform needs no pivot-miner code, only the JSON input.
    handle = await client.start_workflow(
        "pivotMiningWorkflow",
        {"config_path": config_path, "run_id": workflow_id},
        id=workflow_id,
        task_queue=os.environ.get("PIVOT_MINER_TASK_QUEUE", "pivot-mining"),
    )
    result = await handle.result()
    # result: {"runId", "runDir", "pivotsPath", "validatorExitCode", "gymConfigPath", "reportPath",
    #          "counts", "accounting", "runSummaryPath"}
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
    # A short-lived client-only process can abort during interpreter teardown while the SDK's Rust
    # runtime threads are still alive (temporalio/sdk-python#300, open): the result is printed by
    # then, so flush it and skip the teardown instead of exiting with SIGABRT.
    sys.stdout.flush()
    os._exit(0)
