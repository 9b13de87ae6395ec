import { deprecatePatch, proxyActivities } from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { collectStageActivityOptions } from './activityOptions';
import { stageSettings } from '../contracts/stageSettings';
import type { CollectStageInput, CollectStageResult } from '../contracts/payloads';
import { runStageChunks, trackProgress } from './stageChunks';

// collect → profile as one reusable sub-pipeline (docs/architecture.md): the collect stage runs it with the
// agent executor, local profiling runs it on pivot candidates with the single-step executor.

const { finishStage, stageAccounting } = proxyActivities<PivotActivities>(collectStageActivityOptions);

// Patches whose old branches are retired the way Temporal documents: each patched() became a
// deprecatePatch() at the same place, so histories recorded with the patches still replay, and
// histories begun before them (which took the old branches) cannot. Once no open history was
// recorded before this release, the deprecatePatch() calls go too.
const MERGE_DURING_CHUNKS = 'merge-during-chunks';
const FINISH_IN_ONE_ACTIVITY = 'finish-stage-in-one-activity';
const ROLLOUT_ACCOUNTING = 'rollout-accounting';

export async function collectRolloutsWorkflow(input: CollectStageInput): Promise<CollectStageResult> {
  deprecatePatch(MERGE_DURING_CHUNKS);
  const progress = trackProgress(input);
  const { materialize, merged, notifier } = await runStageChunks(input, progress);

  // Told beside the finish, which early profiling does not wait for: it reads the chunks themselves.
  const told = notifier?.finish(materialize.chunks);
  const { plan, stage, outPrefix } = input;
  progress.phase = 'finish';
  deprecatePatch(FINISH_IN_ONE_ACTIVITY);
  const { merge, profile } = await finishStage({
    plan,
    stage,
    outPrefix,
    merged,
    allowPartialRollouts: stageSettings(plan, stage).allowPartialRollouts,
  });
  await told;
  deprecatePatch(ROLLOUT_ACCOUNTING);
  progress.phase = 'accounting';
  progress.accounting = await stageAccounting({ plan, stage, outPrefix });
  progress.phase = 'done';
  return { materialize, merge, profile, accounting: progress.accounting };
}
