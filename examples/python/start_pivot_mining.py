"""Start a pivot-miner run from Python by workflow type name and JSON input, and wait for its dataset.

Needs only Temporal's Python SDK (`pip install 'temporalio>=1.16'`); the input shape is published as
schemas/pivot_mining_input.schema.json. Temporal is found as the pivot-miner workers find it: the
TEMPORAL_* variables (address, namespace, API key, TLS) and the profiles of the Temporal config
file (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE); the task queue is PIVOT_MINER_TASK_QUEUE.

    python start_pivot_mining.py configs/demo.yaml [workflow-id]
"""

import asyncio
import json
import os
import sys

from temporalio.client import Client
from temporalio.envconfig import ClientConfig


async def connect() -> Client:
    config = ClientConfig.load_client_connect_config()
    config.setdefault("target_host", "localhost:7233")
    return await Client.connect(**config)


async def main() -> None:
    config_path = sys.argv[1] if len(sys.argv) > 1 else "configs/demo.yaml"
    workflow_id = sys.argv[2] if len(sys.argv) > 2 else "pivot-mining-from-python"
    client = await connect()
    # Started by type name: the platform needs no pivot-miner code, only the JSON input.
    handle = await client.start_workflow(
        "pivotMiningWorkflow",
        {"config_path": config_path, "run_id": workflow_id},
        id=workflow_id,
        task_queue=os.environ.get("PIVOT_MINER_TASK_QUEUE", "pivot-mining"),
    )
    result = await handle.result()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
    # A short-lived client-only process can abort during interpreter teardown while the SDK's Rust
    # runtime threads are still alive (temporalio/sdk-python#300, open): the result is printed by
    # then, so flush it and skip the teardown instead of exiting with SIGABRT.
    sys.stdout.flush()
    os._exit(0)
