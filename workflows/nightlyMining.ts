import { executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { stageActivityOptions } from './activityOptions';
import { nightlyProgressQuery } from '../contracts/temporal';
import { collectRolloutsWorkflow } from './collectRollouts';
import type { NightlyMiningInput } from '../contracts/workflowInputs';
import type { NightlyMiningResult } from '../contracts/poolPayloads';
import { accountingCounts } from '../gym/rolloutAccounting';

// One nightly run over the config's source rollouts files: scan → convert the new ones → dedupe
// against the pool → local-profile → publish a new pool version. Sources are already rollouts, so
// nothing is re-collected; a run with no new source ends after the scan.

const { prepareNightlyRun, ensureServers, convertNewSources, publishNightlyVersion } =
  proxyActivities<PivotActivities>(stageActivityOptions);

/** `20250102T020000Z`: sortable, and a plain directory name. */
function versionStamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

export async function nightlyMiningWorkflow(input: NightlyMiningInput): Promise<NightlyMiningResult> {
  const workflowId = workflowInfo().workflowId;
  let stage = 'scan';
  let versionId: string | null = null;
  let childWorkflowId: string | null = null;
  setHandler(nightlyProgressQuery, () => ({ stage, versionId, childWorkflowId }));

  const nightly = await prepareNightlyRun({ input, versionBase: versionStamp(new Date()) });
  if (nightly.newSources.length === 0) {
    stage = 'done';
    return {
      status: 'up_to_date',
      message: `nothing new: all ${nightly.matchedSources} source file(s) matching pool.sources were already mined; latest stays ${nightly.previousVersion ?? '(none)'}`,
      poolDir: nightly.poolDir,
      versionId: nightly.previousVersion,
      pivotsPath:
        nightly.previousVersion === null ? null : `${nightly.poolDir}/versions/${nightly.previousVersion}/pivots.jsonl`,
      sources: [],
      counts: { matched_sources: nightly.matchedSources, new_sources: 0 },
    };
  }
  versionId = nightly.versionId;
  const counts: Record<string, number> = {
    matched_sources: nightly.matchedSources,
    new_sources: nightly.newSources.length,
  };

  stage = 'serve';
  const servers = await ensureServers(nightly.plan);

  stage = 'convert';
  const converted = await convertNewSources({ nightly });
  Object.assign(counts, {
    positive_trajectories: converted.positiveTrajectories,
    decision_points: converted.decisionPoints,
    candidates: converted.candidates,
    duplicates_of_pool: converted.duplicatesOfPool,
  });

  let localProfilePath: string | null = null;
  if (converted.candidates > 0) {
    stage = 'local_profile';
    childWorkflowId = `${workflowId}/local_profile`;
    const profiled = await executeChild(collectRolloutsWorkflow, {
      workflowId: childWorkflowId,
      args: [
        {
          plan: nightly.plan,
          stage: 'local_profile',
          inputPath: converted.candidatesPath,
          outPrefix: `${nightly.plan.runDir}/local_profile`,
        },
      ],
    });
    childWorkflowId = null;
    counts.local_profile_rollouts = profiled.merge.completed;
    counts.local_profile_failures = profiled.merge.failedKeys;
    if (profiled.accounting) Object.assign(counts, accountingCounts('local_profile', profiled.accounting));
    localProfilePath = profiled.profile.rewardProfilingPath;
  }

  stage = 'publish';
  const version = await publishNightlyVersion({
    nightly,
    convert: converted,
    localProfilePath,
    simulated: servers.simulated,
    funnel: { ...counts },
  });
  stage = 'done';
  return {
    status: 'published',
    message: `published ${version.versionId}: ${version.counts.added} new pivot(s) from ${nightly.newSources.length} new source file(s), ${version.counts.pivots} in the pool`,
    poolDir: nightly.poolDir,
    versionId: version.versionId,
    pivotsPath: version.pivotsPath,
    sources: nightly.newSources.map((s) => s.path),
    counts: version.counts,
  };
}
