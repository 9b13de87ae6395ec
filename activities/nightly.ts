import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import YAML from 'yaml';
import { convertToCandidates } from '../gym/convert';
import { PIVOTS_FILE } from '../gym/publish';
import { nightlyMiningInputSchema } from '../workflows/input';
import type { NightlyConvertResult, NightlyPlan, PoolVersionResult } from '../workflows/poolTypes';
import { pivotAgentName } from '../workflows/stageSettings';
import { ConfigError, describeIssues, loadPipelineConfig, resolveInside, type PipelineConfig } from './config';
import {
  commitVersionDir,
  freeVersionId,
  latestVersion,
  pivotKey,
  poolDirFor,
  readRows,
  stagingDir,
  validateVersion,
  writeDatasetMetrics,
  writeRows,
} from './pool';
import { workerBaseDir } from './prepare';
import { publishBatch } from './publish';
import { findNewSources, readManifest, recordSources, writeManifest } from './sources';

// Incremental nightly mining: only source rollouts files the pool manifest has not seen are
// converted and locally profiled; their mixed pivots are added to the latest version's pivots.

/** Validates a workflow input, loads its config and resolves the artifacts root, mapping bad input to non-retryable failures. */
export async function loadInputConfig<S extends z.ZodType<{ config_path: string; seed?: number }>>(
  schema: S,
  rawInput: unknown,
): Promise<{ input: z.infer<S>; config: PipelineConfig; baseDir: string; artifactsRoot: string }> {
  const parsed = schema.safeParse(rawInput);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(describeIssues('workflow input', parsed.error), 'InvalidInput');
  const input = parsed.data;
  const baseDir = workerBaseDir();
  try {
    const config = await loadPipelineConfig(resolveInside(baseDir, baseDir, input.config_path));
    if (input.seed !== undefined) config.seed = input.seed;
    const artifactsRoot = path.resolve(baseDir, process.env.PIVOT_MINER_ARTIFACTS_ROOT ?? config.artifacts_root);
    return { input, config, baseDir, artifactsRoot };
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
}

export async function prepareNightlyRun(args: { input: unknown; versionBase: string }): Promise<NightlyPlan> {
  const { config, baseDir, artifactsRoot } = await loadInputConfig(nightlyMiningInputSchema, args.input);
  if (config.pool.sources.length === 0) {
    throw ApplicationFailure.nonRetryable('config: pool.sources: nightly mining needs at least one source glob', 'ConfigError');
  }
  const poolDir = poolDirFor(config, artifactsRoot);
  await mkdir(poolDir, { recursive: true });
  let scan;
  try {
    scan = await findNewSources(baseDir, config.pool.sources, await readManifest(poolDir));
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
  const versionId = freeVersionId(poolDir, args.versionBase);
  const runDir = path.join(poolDir, 'runs', versionId);
  if (scan.fresh.length > 0) {
    await mkdir(runDir, { recursive: true });
    await writeFile(path.join(runDir, 'pipeline_config.yaml'), YAML.stringify(config));
  }
  return {
    plan: { runId: versionId, runDir, baseDir, config },
    poolDir,
    versionId,
    previousVersion: (await latestVersion(poolDir))?.id ?? null,
    matchedSources: scan.matched,
    newSources: scan.fresh,
  };
}

/** Converts just the new source files, then drops candidates the pool already holds. */
export async function convertNewSources(args: { nightly: NightlyPlan }): Promise<NightlyConvertResult> {
  const { plan, poolDir, newSources } = args.nightly;
  let summary;
  try {
    summary = await convertToCandidates({
      inputs: newSources.map((s) => s.absPath),
      outDir: plan.runDir,
      sourceRoot: plan.baseDir,
      agent_name: pivotAgentName(plan),
      source_format: 'gym_rollouts',
      ...plan.config.convert,
    });
  } catch (err) {
    if (err instanceof Error && /:\d+:/.test(err.message)) throw ApplicationFailure.nonRetryable(err.message, 'BadInput');
    throw err;
  }
  const latest = await latestVersion(poolDir);
  const poolKeys = new Set((latest ? await readRows(latest.pivotsPath) : []).map(pivotKey));
  const candidates = await readRows(summary.candidatesPath);
  const fresh = candidates.filter((row) => !poolKeys.has(pivotKey(row)));
  const candidatesPath = path.join(plan.runDir, 'candidates_new.jsonl');
  await writeRows(candidatesPath, fresh);
  return {
    candidatesPath,
    skippedPath: summary.skippedPath,
    metricsPath: summary.metricsPath,
    positiveTrajectories: summary.counts.positive_trajectories,
    decisionPoints: summary.counts.decision_points,
    candidates: fresh.length,
    skipped: summary.counts.skipped,
    deduped: summary.counts.deduped,
    duplicatesOfPool: candidates.length - fresh.length,
  };
}

/**
 * Publishes the new candidates' mixed pivots, appends them to the latest version's pivots as a new
 * version, then moves `latest` and records the sources in the manifest, in that order: a crash in
 * between only makes the next run re-mine sources whose pivots the pool already deduplicates.
 */
export async function publishNightlyVersion(args: {
  nightly: NightlyPlan;
  convert: NightlyConvertResult;
  /** Null when no new candidate survived deduplication (nothing was profiled). */
  localProfilePath: string | null;
  simulated: boolean;
  funnel: Record<string, number>;
}): Promise<PoolVersionResult> {
  const { nightly, convert } = args;
  const { plan, poolDir, versionId } = nightly;
  const agentName = pivotAgentName(plan);
  const staging = await stagingDir(poolDir, versionId);
  const finalPivotsPath = path.join(poolDir, 'versions', versionId, PIVOTS_FILE);
  const datasetName = plan.config.publish.dataset_name ?? plan.config.name;
  const emptyProfile = path.join(plan.runDir, 'local_profile_empty.jsonl');
  if (args.localProfilePath === null) await writeFile(emptyProfile, '');
  const published = await publishBatch(plan, {
    candidatesPath: convert.candidatesPath,
    localProfilePath: args.localProfilePath ?? emptyProfile,
    skippedPath: convert.skippedPath,
    convertMetricsPath: convert.metricsPath,
    outDir: staging,
    jsonlFpath: finalPivotsPath,
    simulated: args.simulated,
    funnel: args.funnel,
  });

  const latest = await latestVersion(poolDir);
  const previous = latest ? await readRows(latest.pivotsPath) : [];
  const seen = new Set(previous.map(pivotKey));
  const added = (await readRows(published.pivotsPath)).filter((row) => {
    const key = pivotKey(row);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const union = [...previous, ...added];
  await writeRows(published.pivotsPath, union);
  await writeDatasetMetrics(staging, datasetName, finalPivotsPath, union);
  await validateVersion(published.pivotsPath, agentName, published.gymConfigPath, union.length);
  await copyFile(path.join(plan.runDir, 'pipeline_config.yaml'), path.join(staging, 'pipeline_config.yaml'));
  const counts = {
    ...args.funnel,
    previous_pivots: previous.length,
    new_mixed: published.counts.mixed ?? 0,
    new_all_pass: published.counts.all_pass ?? 0,
    new_all_fail: published.counts.all_fail ?? 0,
    added: added.length,
    pivots: union.length,
  };
  await writeFile(
    path.join(staging, 'version.json'),
    `${JSON.stringify(
      {
        version: versionId,
        previous_version: latest?.id ?? null,
        kind: 'nightly',
        sources: nightly.newSources.map((s) => ({ path: s.path, size: s.size, sha256: s.sha256 })),
        counts,
        simulated_policy: args.simulated,
      },
      null,
      2,
    )}\n`,
  );
  const versionDir = await commitVersionDir(poolDir, staging, versionId);
  await writeManifest(poolDir, recordSources(await readManifest(poolDir), nightly.newSources, versionId));
  return {
    versionId,
    versionDir,
    pivotsPath: finalPivotsPath,
    gymConfigPath: path.join(versionDir, path.basename(published.gymConfigPath)),
    reportPath: path.join(versionDir, path.basename(published.reportPath)),
    counts,
  };
}

