import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { publishPivotDataset } from '../gym/publish';
import { validatePivotDataset } from '../gym/validator';
import { pivotAgentName } from '../workflows/stageSettings';
import type { ConvertResult, PublishResult, RunPlan } from '../workflows/types';

/**
 * Selection (keep mixed-reward pivots) and publishing. The published file is run through the port of
 * NeMo Gym's validator before the stage reports success, so a run never hands on a dataset Gym rejects.
 */
export async function publishStage(input: {
  plan: RunPlan;
  convert: ConvertResult;
  localProfilePath: string;
  simulated: boolean;
  funnel: Record<string, number>;
}): Promise<PublishResult> {
  const { plan, convert } = input;
  const { filter, publish, local_profile: lp } = plan.config;
  const outDir = path.join(plan.runDir, 'dataset');
  const agentName = pivotAgentName(plan);
  const published = await publishPivotDataset({
    candidatesPath: convert.candidatesPath,
    localProfilePath: input.localProfilePath,
    skippedPath: convert.skippedPath,
    convertMetricsPath: convert.metricsPath,
    outDir,
    agentName,
    modelServerName: publish.model_server_name,
    resourcesServerName: publish.resources_server_name,
    comparatorConfig: lp.tool_call_comparator_config,
    maxPivots: filter.max_pivots,
    allowPartial: filter.allow_partial,
    datasetName: publish.dataset_name ?? plan.config.name,
    simulatorLabel: input.simulated ? 'the pivot-miner seeded policy simulator' : undefined,
    funnel: input.funnel,
  });
  const validation = await validatePivotDataset({
    path: published.pivotsPath,
    agentRef: agentName,
    requireFields: [],
    requireAnyFields: [],
    checkToolNames: true,
    gymConfigPath: published.gymConfigPath,
  });
  if (validation.exitCode !== 0 && published.counts.published > 0) {
    throw ApplicationFailure.nonRetryable(`published dataset failed validation: ${validation.stderr.trim()}`, 'InvalidDataset');
  }
  return {
    pivotsPath: published.pivotsPath,
    gymConfigPath: published.gymConfigPath,
    selectionMetricsPath: published.selectionMetricsPath,
    reportPath: published.reportPath,
    validatorExitCode: validation.exitCode,
    counts: published.counts,
  };
}
