import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { writeFileDurably } from '../../gym/durable';
import { PIPELINE_VERSION } from '../../gym/runManifest';
import { buildRunSummary, RUN_SUMMARY_FILE } from '../../gym/runSummary';
import { readRunHealth, type StageHealth } from '../../gym/health/stageHealth';
import type { RolloutAccounting } from '../../gym/rolloutAccounting';
import { InvalidDatasetError } from '../../contracts/errors';
import { publishPivotDataset } from '../../gym/publish';
import { validatePivotDataset } from '../../gym/validator';
import { pivotAgentName } from '../../contracts/stageSettings';
import type { ConvertResult, PublishResult, RunPlan } from '../../contracts/payloads';
import { recordPublished } from './publishedDigests';
import { writeEngineTimeline } from './engineTimeline';

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
  /** Per rollout stage; absent from runs begun before stages accounted for their rollouts. */
  accounting?: Record<string, RolloutAccounting>;
}): Promise<PublishResult> {
  const { plan, convert } = input;
  const agentName = pivotAgentName(plan);
  const datasetDir = path.join(plan.runDir, 'dataset');
  const timeline = plan.timelineDir && (await writeEngineTimeline(plan.runDir, plan.timelineDir));
  const health = await readRunHealth(plan.runDir);
  const published = await publishBatch(plan, {
    candidatesPath: convert.candidatesPath,
    localProfilePath: input.localProfilePath,
    skippedPath: convert.skippedPath,
    convertMetricsPath: convert.metricsPath,
    outDir: datasetDir,
    simulated: input.simulated,
    // Embedded collect always runs the simulator's policy, whatever model local profiling uses.
    sourceRolloutsSimulated: plan.config.servers.mode === 'embedded',
    funnel: input.funnel,
    accounting: input.accounting,
    health,
    validationSplit: true,
    ...(timeline ? { engineTimelineSrc: path.relative(datasetDir, timeline) } : {}),
  });
  const validate = (file: string) =>
    validatePivotDataset({
      path: file,
      agentRef: agentName,
      requireFields: [],
      requireAnyFields: [],
      checkToolNames: true,
      batchActions: plan.config.convert.batch_pivots,
      gymConfigPath: published.gymConfigPath,
    });
  const validation = await validate(published.pivotsPath);
  if (validation.exitCode !== 0 && (published.publishedBySplit.train ?? 0) > 0) {
    throw new InvalidDatasetError(`published dataset failed validation: ${validation.stderr.trim()}`);
  }
  if (published.validationPivotsPath !== undefined && (published.publishedBySplit.validation ?? 0) > 0) {
    const { exitCode, stderr } = await validate(published.validationPivotsPath);
    if (exitCode !== 0) throw new InvalidDatasetError(`published validation split failed validation: ${stderr.trim()}`);
  }
  const c = published.counts;
  const summary = buildRunSummary({
    runId: plan.runId,
    pipelineVersion: PIPELINE_VERSION,
    numSamples: plan.config.local_profile.num_samples,
    allowPartial: plan.config.filter.allow_partial,
    accounting: input.accounting ?? {},
    pivots: {
      candidates: c.candidates,
      published: c.published,
      published_partial: c.published_partial,
      held_back_incomplete: c.incomplete,
      all_pass: c.all_pass,
      all_fail: c.all_fail,
      constant: c.constant,
      over_ceiling: c.over_ceiling,
      over_budget: c.over_budget,
      over_share: c.over_share,
    },
    publishedBySplit: published.publishedBySplit,
    counts: { ...input.funnel, ...c },
    health,
  });
  const runSummaryPath = path.join(plan.runDir, RUN_SUMMARY_FILE);
  await writeFileDurably(runSummaryPath, `${JSON.stringify(summary, null, 2)}\n`);
  // Every file in dataset/ is this step's: the pivots, the validation split, the Gym config, metrics,
  // report; a temporary one is what a crashed attempt left, published by no one.
  const datasetFiles = (await readdir(datasetDir, { withFileTypes: true }))
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.tmp'))
    .map((entry) => path.join(datasetDir, entry.name));
  await recordPublished(plan.runDir, 'publish', [...datasetFiles, runSummaryPath]);
  return {
    pivotsPath: published.pivotsPath,
    gymConfigPath: published.gymConfigPath,
    selectionMetricsPath: published.selectionMetricsPath,
    reportPath: published.reportPath,
    validatorExitCode: validation.exitCode,
    counts: published.counts,
    runSummaryPath,
  };
}

/** Selection + NeMo Gym files for one batch of profiled candidates, with the config's publish settings. */
export async function publishBatch(
  plan: RunPlan,
  opts: {
    candidatesPath: string;
    localProfilePath: string;
    skippedPath?: string;
    convertMetricsPath?: string;
    outDir: string;
    /** `datasets[].jsonl_fpath` of the Gym config; defaults to the published file's absolute path. */
    jsonlFpath?: string;
    simulated: boolean;
    sourceRolloutsSimulated?: boolean;
    funnel: Record<string, number>;
    accounting?: Record<string, RolloutAccounting>;
    health?: Record<string, StageHealth>;
    /** Split off publish.validation_fraction; a pool version (nightly, curriculum) stays train only. */
    validationSplit?: boolean;
    engineTimelineSrc?: string;
  },
) {
  const { filter, publish, local_profile: lp } = plan.config;
  const { simulated, sourceRolloutsSimulated, validationSplit, ...files } = opts;
  return publishPivotDataset({
    ...files,
    agentName: pivotAgentName(plan),
    modelServerName: publish.model_server_name,
    resourcesServerName: publish.resources_server_name,
    comparatorConfig: lp.tool_call_comparator_config,
    maxPivots: filter.max_pivots,
    allowPartial: filter.allow_partial,
    maxPassRate: filter.max_pass_rate,
    maxShare: filter.max_share,
    ...(validationSplit
      ? { validationFraction: publish.validation_fraction, validationSeed: publish.validation_seed ?? plan.config.seed }
      : {}),
    datasetName: publish.dataset_name ?? plan.config.name,
    simulatorLabel: simulated ? 'the pivot-miner seeded policy simulator' : undefined,
    policy: simulated
      ? undefined
      : {
          model: lp.model.model ?? publish.model_server_name,
          api: lp.model.api,
          sourceRolloutsSimulated: sourceRolloutsSimulated ?? false,
        },
  });
}
