import { convertToCandidates } from '../../gym/convert';
import { pivotAgentName } from '../../contracts/stageSettings';
import type { ConvertResult, RunPlan } from '../../contracts/payloads';
import { recordPublished } from './publishedDigests';

/** Clean positive trajectories → one pivot candidate per assistant decision point, plus the skip audit. */
export async function convertStage(input: {
  plan: RunPlan;
  rolloutsPath: string;
  rewardProfilePath: string;
}): Promise<ConvertResult> {
  const { plan } = input;
  // Bad source rows throw ConvertInputError / JsonlError, which the retry policy does not retry.
  const summary = await convertToCandidates({
    inputs: [input.rolloutsPath],
    outDir: plan.runDir,
    rewardProfilePath: input.rewardProfilePath,
    sourceRoot: plan.runDir,
    agent_name: pivotAgentName(plan),
    source_format: 'gym_rollouts',
    ...plan.config.convert,
  });
  await recordPublished(plan.runDir, 'convert', [summary.candidatesPath, summary.skippedPath, summary.metricsPath]);
  return {
    candidatesPath: summary.candidatesPath,
    skippedPath: summary.skippedPath,
    metricsPath: summary.metricsPath,
    positiveTrajectories: summary.counts.positive_trajectories,
    decisionPoints: summary.counts.decision_points,
    candidates: summary.counts.candidates,
    skipped: summary.counts.skipped,
    deduped: summary.counts.deduped,
  };
}
