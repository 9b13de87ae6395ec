import { access, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { writeAggregateMetrics } from './aggregateMetrics';
import { mergeRest } from './merge';
import { mergedMoves, type PartialFiles } from './partialFiles';
import { profileStage } from './profile';
import { checkStageHealth, healthStop, type CheckedHealth } from './healthCheck';
import { completionStop } from './requireComplete';
import { mergedPaths } from '../chunk/chunkIndex';
import { claimStageFence, isSuperseded, type Fence } from '../chunk/fence';
import { pauseAt } from '../run/testHooks';
import { recordPublished } from '../run/publishedDigests';
import { aggregateMetricsPath } from '../../gym/aggregateMetrics';
import { rewardProfileOutputPaths } from '../../gym/rewardProfile';
import type { MergeProgress, MergeResult, ProfileResult, RolloutStage, RunPlan } from '../../contracts/payloads';
import { mkdirDurably } from '../../gym/durable';

/**
 * From this many completed rollouts on, the reward profile and the aggregate metrics run one after
 * the other. Each holds its columns (a few bytes per rollout) while it reads; overlapped, both sets
 * are live at once, which at a million rollouts costs more memory than the little time it saves on
 * a tail that runs once (`scripts/diagnostics/profileStageMemory.ts` measures both). Below it the
 * overlap is worth more than the memory: on a short stage the aggregate metrics mostly wait on the
 * agent servers, and the tail is a visible share of the stage's time.
 */
export const SEQUENTIAL_TAIL_FROM_ROLLOUTS = 50_000;

/** The reward profile and the aggregate metrics of a merged stage, overlapped only where memory is no concern. */
export async function profileWithAggregateMetrics(input: {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
  rolloutsPath: string;
  completed: number;
  allowPartialRollouts: boolean;
  /** The stage's fence, through which the aggregate metrics are published. */
  fence: Fence;
}): Promise<ProfileResult> {
  const profile = () =>
    profileStage({
      outPrefix: input.outPrefix,
      allowPartialRollouts: input.allowPartialRollouts,
      // Plans recorded before the key existed follow the default.
      nemoGymVersion: input.plan.config.profile.nemo_gym_version ?? '0.7.0',
    });
  const aggregate = () =>
    writeAggregateMetrics({ plan: input.plan, stage: input.stage, rolloutsPath: input.rolloutsPath }, input.fence);
  if (input.completed >= SEQUENTIAL_TAIL_FROM_ROLLOUTS) {
    const result = await profile();
    await aggregate();
    return result;
  }
  // Both settle before either's failure is thrown: the caller removes the directory they write in,
  // and a removal racing the other's writes fails (ENOTEMPTY) or leaves its file behind.
  const [profiled, aggregated] = await Promise.allSettled([profile(), aggregate()]);
  if (profiled.status === 'rejected') throw profiled.reason;
  if (aggregated.status === 'rejected') throw aggregated.reason;
  return profiled.value;
}

/**
 * A stage as the finish's profile and aggregate metrics read it, in a directory of this attempt's
 * own: the materialized inputs and their indexes linked from the run directory, the merged rollouts
 * and digests linked from this attempt's partial files. What they write lands there too, published
 * with the merged files by one fenced set of renames. The directory is looked at after it was
 * created: a successor that claimed meanwhile may have looked before it existed.
 */
async function finishView(fence: Fence, outPrefix: string, files: PartialFiles): Promise<string> {
  const dir = fence.own('.view');
  await pauseAt('finish.checked', fence.token.name);
  await mkdirDurably(path.join(dir, `${path.basename(outPrefix)}_shards`));
  await fence.checkClaimed([dir]);
  const stem = path.basename(outPrefix);
  const view = path.join(dir, stem);
  const runDir = path.dirname(outPrefix);
  for (const entry of await readdir(runDir)) {
    if (entry.startsWith(`${stem}_materialized_inputs`))
      await symlink(path.resolve(runDir, entry), path.join(dir, entry));
  }
  await symlink(path.resolve(files.rollouts), `${view}.jsonl`);
  await symlink(path.resolve(files.digests), mergedPaths(view).digestsPath);
  // The aggregate metrics' count-as-zero options read the sidecar (countedAsZero.ts).
  if (await exists(files.failures)) await symlink(path.resolve(files.failures), mergedPaths(view).failuresPath);
  return view;
}

/** Cancellation reaches the finish before it publishes: a cancelled finish leaves the run directory as it was. */
function throwIfCancelled(): void {
  const signal = Context.current().cancellationSignal;
  if (signal.aborted) throw new CancelledFailure(`finish cancelled: ${String(signal.reason)}`);
}

/**
 * The tail of a collect stage after its last chunk, as one activity: the rest of the merge, then
 * reward profiling and the aggregate metrics (both read only the merged digests). One activity
 * rather than three saves the workflow round trips between them, which on a short stage cost as
 * much as the work. Everything is written under this attempt's names and published at the end
 * (docs/fencing.md), so a retry redoes it whole and an older attempt still running publishes nothing.
 */
export async function finishStage(input: {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
  merged?: MergeProgress;
  allowPartialRollouts: boolean;
}): Promise<{ merge: MergeResult; profile: ProfileResult }> {
  const { plan, stage, outPrefix } = input;
  const fence = await claimStageFence(outPrefix);
  const { files, completed, failedKeys } = await mergeRest(outPrefix, input.merged, fence);
  const view = await finishView(fence, outPrefix, files);
  let viewed: ProfileResult;
  let checked: CheckedHealth | undefined;
  try {
    viewed = await profileWithAggregateMetrics({
      plan,
      stage,
      outPrefix: view,
      rolloutsPath: `${view}.jsonl`,
      completed,
      allowPartialRollouts: input.allowPartialRollouts,
      fence,
    });
    checked = await checkStageHealth({ plan, view, outPrefix });
    throwIfCancelled();
  } catch (err) {
    const failure = await fence.explain(err);
    // The merged files are published whatever the profile says (strict mode refusing missing
    // rollouts leaves them to look at), unless a newer attempt owns the step or the run was cancelled.
    if (!isSuperseded(failure) && !(failure instanceof CancelledFailure))
      await fence.publish(mergedMoves(outPrefix, files)).catch(() => undefined);
    // A newer attempt may be removing the view too; what either leaves, the next removeOlder takes.
    await rm(path.dirname(view), { recursive: true, force: true }).catch(() => undefined);
    throw failure;
  }
  const { rolloutsPath, failuresPath } = mergedPaths(outPrefix);
  const { repeatLevelMetricsPath, ...profiled } = rewardProfileOutputPaths(rolloutsPath);
  const moves = [
    ...mergedMoves(outPrefix, files),
    [viewed.rewardProfilingPath, profiled.rewardProfilingPath],
    [viewed.agentMetricsPath, profiled.agentMetricsPath],
    ...(checked?.moves ?? []),
  ] as Array<[string, string]>;
  // Written when the profile follows NeMo Gym 0.7.0 (nemo_gym_version).
  const repeats = rewardProfileOutputPaths(`${view}.jsonl`).repeatLevelMetricsPath;
  if (await exists(repeats)) moves.push([repeats, repeatLevelMetricsPath]);
  const aggregated = aggregateMetricsPath(`${view}.jsonl`);
  if (await exists(aggregated)) moves.push([aggregated, aggregateMetricsPath(rolloutsPath)]);
  await fence.publish(moves);
  await recordPublished(
    plan.runDir,
    `${stage} finish`,
    moves.map(([, to]) => to),
  );
  await rm(path.dirname(view), { recursive: true, force: true });
  healthStop(plan, stage, outPrefix, checked);
  await completionStop(plan, stage, outPrefix, completed);
  return { merge: { rolloutsPath, failuresPath, completed, failedKeys }, profile: { ...viewed, ...profiled } };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
