import { proxyActivities } from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import type { CollectStageInput, EarlySegmentResult } from '../contracts/payloads';
import { collectStageActivityOptions } from './activityOptions';
import { runStageChunks, trackProgress } from './stageChunks';

const { publishSegmentSamples } = proxyActivities<PivotActivities>(collectStageActivityOptions);

/**
 * Local profiling of one early-profiling segment (workflows/prefetchLocalProfile.ts): the chunks of a
 * stage, then its merged samples published, and no finish. The run reads only those samples and
 * their count; its own local profile's finish profiles rewards, aggregates metrics and checks health
 * over every sample it reuses, so a segment's would be written only to be removed unread.
 */
export async function earlySegmentWorkflow(input: CollectStageInput): Promise<EarlySegmentResult> {
  const progress = trackProgress(input);
  const { materialize, merged } = await runStageChunks(input, progress);
  progress.phase = 'publish';
  const merge = await publishSegmentSamples({ outPrefix: input.outPrefix, merged });
  progress.phase = 'done';
  return { materialize, merge };
}
