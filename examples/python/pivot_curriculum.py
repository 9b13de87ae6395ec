"""Start pivotCurriculumWorkflow from Python and hand it a policy checkpoint, as a trainer does.

The curriculum runs until cancelled; each `policyCheckpoint` Update re-profiles its pool with that
checkpoint and answers with the round: the curriculum's next version, which the next training
stage reads. Inputs are published as schemas/pivot_curriculum_input.schema.json and
schemas/policy_checkpoint_update.schema.json. Temporal is found as in start_pivot_mining.py.

    python pivot_curriculum.py configs/nightly.yaml my-curriculum my-policy@step-1200 1200 [initial-pool]
"""

import asyncio
import json
import os
import sys

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.envconfig import ClientConfig


async def connect() -> Client:
    config = ClientConfig.load_client_connect_config()
    config.setdefault("target_host", "localhost:7233")
    return await Client.connect(**config)


async def curriculum(client: Client, config_path: str, workflow_id: str, initial_pool: str | None) -> WorkflowHandle:
    curriculum_input = {"config_path": config_path}
    if initial_pool:
        curriculum_input["initial_pool"] = initial_pool
    # The trainer calls this before every checkpoint: the first call starts the curriculum, later
    # ones find it running.
    return await client.start_workflow(
        "pivotCurriculumWorkflow",
        curriculum_input,
        id=workflow_id,
        task_queue=os.environ.get("PIVOT_MINER_TASK_QUEUE", "pivot-mining"),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


async def main() -> None:
    config_path, workflow_id, model, training_step = sys.argv[1:5]
    initial_pool = sys.argv[5] if len(sys.argv) > 5 else None
    client = await connect()
    handle = await curriculum(client, config_path, workflow_id, initial_pool)
    checkpoint = {"model": model, "training_step": int(training_step)}
    round_ = await handle.execute_update("policyCheckpoint", checkpoint)
    print(json.dumps(round_))


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
