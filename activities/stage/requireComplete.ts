import { IncompleteCollectionError } from '../../contracts/errors';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import { mergedPaths, readMaterializedMeta } from '../chunk/chunkIndex';

// NeMo Gym 0.7.0's `require_complete` (rollout_collection.py `check_completion`): the run fails once
// the collection's files are written, so what did complete stays to look at and to resume from. A
// rollout counts as complete when it has a line in rollouts.jsonl; failed attempts live only in the
// failures sidecar, and an agent's `_ng_no_persist` result nowhere, so neither counts.

/** Throws, not to be retried, when a collect stage with require_complete completed fewer rollouts than it materialized. */
export async function completionStop(
  plan: RunPlan,
  stage: RolloutStage,
  outPrefix: string,
  completed: number,
): Promise<void> {
  if (stage !== 'collect' || !plan.config.collect.require_complete) return;
  const meta = await readMaterializedMeta(outPrefix);
  if (!meta) throw new Error(`${outPrefix}: materialized inputs are not finished`);
  if (completed >= meta.rows) return;
  const { rolloutsPath, failuresPath } = mergedPaths(outPrefix);
  // 0.7.0's words first, so a log search for them still finds the failure.
  throw new IncompleteCollectionError(
    `EVAL FAILED: ${completed}/${meta.rows} samples completed. Partial artifacts retained at ${rolloutsPath}. ` +
      `The failed attempts are in ${failuresPath} (collect.require_complete).`,
  );
}
