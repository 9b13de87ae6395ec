import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { MergeProgress, MergeResult } from '../../contracts/payloads';
import { mergedPaths } from '../chunk/chunkIndex';
import { claimStageFence } from '../chunk/fence';
import { mergeRest } from '../stage/merge';
import { mergedMoves } from '../stage/partialFiles';

/**
 * The tail of an early-profiling segment (workflows/earlySegment.ts) after its last chunk: the rest
 * of the merge, published as the segment's `local_profile.jsonl`, the one file the run reads from it
 * (activities/early/prefetched.ts). A stage's finish would also write a reward profile, aggregate
 * metrics and health checks; for a segment those are removed unread, since the run's own local profile
 * profiles, aggregates and checks every sample it reuses. Written under this attempt's names and
 * published by one fenced set of renames, as a stage's finish is (docs/fencing.md).
 */
export async function publishSegmentSamples(input: {
  outPrefix: string;
  merged?: MergeProgress;
}): Promise<MergeResult> {
  const { outPrefix } = input;
  const fence = await claimStageFence(outPrefix);
  const { files, completed, failedKeys } = await mergeRest(outPrefix, input.merged, fence);
  // A segment cancelled with its run publishes nothing more into the directory the run removes.
  const signal = Context.current().cancellationSignal;
  if (signal.aborted) throw new CancelledFailure(`early segment cancelled: ${String(signal.reason)}`);
  await fence.publish(mergedMoves(outPrefix, files));
  const { rolloutsPath, failuresPath } = mergedPaths(outPrefix);
  return { rolloutsPath, failuresPath, completed, failedKeys };
}
