import { copyFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { convertToCandidates } from '../../gym/convert';
import { PIVOTS_FILE, REPORT_FILE } from '../../gym/publish';
import { pivotGymConfigFileName } from '../../gym/gymConfig';
import { nightlyMiningInputSchema } from '../../contracts/workflowInputs';
import type { NightlyConvertResult, NightlyPlan, PoolVersionResult } from '../../contracts/poolPayloads';
import { pivotAgentName } from '../../contracts/stageSettings';
import { ConfigError } from '../../contracts/errors';
import { configKeyLocation } from '../run/configFile';
import {
  commitVersionDir,
  committedVersion,
  freeVersionId,
  latestVersion,
  poolRows,
  readPoolUnion,
  stagingDir,
  validateVersion,
  writeDatasetMetrics,
  writePoolUnion,
  writeRows,
} from './pool';
import { loadRunContext, poolDirOf, type WorkerSettings } from '../run/runContext';
import { publishBatch } from '../run/publish';
import { findNewSources, readManifest, recordSources, writeManifest } from './sources';
import { checkRunManifest, currentRunManifest, recordRunManifest } from '../run/runManifest';
import { mkdirDurably, writeFileDurably } from '../../gym/durable';
import { onFile } from '../../gym/fileError';

// Incremental nightly mining: only source rollouts files the pool manifest has not seen are
// converted and locally profiled; their mixed pivots are added to the latest version's pivots.

export async function prepareNightlyRun(
  settings: WorkerSettings,
  args: { input: unknown; versionBase: string },
): Promise<NightlyPlan> {
  const ctx = await loadRunContext(settings, nightlyMiningInputSchema, args.input);
  const { config, baseDir } = ctx;
  if (config.pool.sources.length === 0) {
    throw new ConfigError(
      `${await configKeyLocation(ctx.configPath, ['pool'])}: pool.sources: nightly mining needs at least one source glob`,
    );
  }
  const poolDir = await poolDirOf(ctx);
  // A nightly run resumes the pool: its versions must all come from one config and pipeline
  // version, whichever sources each night brings (those are recorded per version run below).
  const { sources: _sources, ...poolSettings } = config.pool;
  const poolManifest = currentRunManifest({ ...config, pool: poolSettings }, {});
  const poolRecorded = await checkRunManifest(poolDir, poolManifest, `the pool ${poolDir}`);
  const scan = await findNewSources(baseDir, config.pool.sources, await readManifest(poolDir));
  const versionId = freeVersionId(poolDir, args.versionBase);
  const runDir = path.join(poolDir, 'runs', versionId);
  const runManifest = currentRunManifest(
    config,
    Object.fromEntries(
      scan.fresh.map((s) => [`pool.sources ${s.path}`, { path: s.path, sha256: s.sha256, bytes: s.size }]),
    ),
  );
  const runRecorded =
    scan.fresh.length > 0 ? await checkRunManifest(runDir, runManifest, `nightly run ${versionId}`) : undefined;
  await mkdirDurably(poolDir);
  await recordRunManifest(poolDir, poolManifest, poolRecorded);
  if (scan.fresh.length > 0) {
    await mkdirDurably(runDir);
    await writeFileDurably(path.join(runDir, 'pipeline_config.yaml'), YAML.stringify(config));
    await recordRunManifest(runDir, runManifest, runRecorded);
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
  const summary = await convertToCandidates({
    inputs: newSources.map((s) => s.absPath),
    outDir: plan.runDir,
    sourceRoot: plan.baseDir,
    agent_name: pivotAgentName(plan),
    source_format: 'gym_rollouts',
    ...plan.config.convert,
  });
  const pool = await readPoolUnion((await latestVersion(poolDir))?.pivotsPath ?? null);
  let candidates = 0;
  async function* fresh(): AsyncGenerator<string> {
    for await (const { row, text } of poolRows(summary.candidatesPath)) {
      candidates += 1;
      if (!pool.has(row)) yield text;
    }
  }
  const candidatesPath = path.join(plan.runDir, 'candidates_new.jsonl');
  const freshCount = await writeRows(candidatesPath, fresh());
  return {
    candidatesPath,
    skippedPath: summary.skippedPath,
    metricsPath: summary.metricsPath,
    positiveTrajectories: summary.counts.positive_trajectories,
    decisionPoints: summary.counts.decision_points,
    candidates: freshCount,
    skipped: summary.counts.skipped,
    deduped: summary.counts.deduped,
    duplicatesOfPool: candidates - freshCount,
  };
}

/**
 * Publishes the new candidates' mixed pivots, appends them to the latest version's pivots as a new
 * version, then moves `latest` and records the sources in the manifest, in that order: a crash in
 * between only makes the next run re-mine sources whose pivots the pool already deduplicates. A
 * retry that finds its version committed finishes the steps after the commit.
 */
export async function publishNightlyVersion(args: NightlyPublishArgs): Promise<PoolVersionResult> {
  const { nightly } = args;
  const { plan, poolDir, versionId } = nightly;
  const datasetName = plan.config.publish.dataset_name ?? plan.config.name;
  const own = await committedVersion(poolDir, versionId, (v) => v.kind === 'nightly');
  const committed = own
    ? { versionDir: own.dir, counts: nightlyCountsSchema.parse(own.version.counts) }
    : await commitNightlyVersion(args, datasetName);
  await writeManifest(poolDir, recordSources(await readManifest(poolDir), nightly.newSources, versionId));
  return {
    versionId,
    versionDir: committed.versionDir,
    pivotsPath: path.join(committed.versionDir, PIVOTS_FILE),
    gymConfigPath: path.join(committed.versionDir, pivotGymConfigFileName(datasetName)),
    reportPath: path.join(committed.versionDir, REPORT_FILE),
    counts: committed.counts,
  };
}

interface NightlyPublishArgs {
  nightly: NightlyPlan;
  convert: NightlyConvertResult;
  /** Null when no new candidate survived deduplication (nothing was profiled). */
  localProfilePath: string | null;
  simulated: boolean;
  funnel: Record<string, number>;
}

const nightlyCountsSchema = z.record(z.string(), z.number());

/** Stages the version (published pivots, the union with `latest`, metrics, version.json) and commits it. */
async function commitNightlyVersion(
  args: NightlyPublishArgs,
  datasetName: string,
): Promise<{ versionDir: string; counts: Record<string, number> }> {
  const { nightly, convert } = args;
  const { plan, poolDir, versionId } = nightly;
  const agentName = pivotAgentName(plan);
  const staging = await stagingDir(poolDir, versionId);
  const finalPivotsPath = path.join(poolDir, 'versions', versionId, PIVOTS_FILE);
  const emptyProfile = path.join(plan.runDir, 'local_profile_empty.jsonl');
  if (args.localProfilePath === null) await onFile(emptyProfile, () => writeFile(emptyProfile, ''));
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
  const newPivotsPath = path.join(plan.runDir, 'pivots_new.jsonl');
  await rename(published.pivotsPath, newPivotsPath);
  const union = await writePoolUnion(published.pivotsPath, latest?.pivotsPath ?? null, newPivotsPath);
  const pivots = union.previous + union.added;
  await writeDatasetMetrics(staging, datasetName, finalPivotsPath, published.pivotsPath);
  await validateVersion(
    published.pivotsPath,
    agentName,
    published.gymConfigPath,
    pivots,
    plan.config.convert.batch_pivots,
  );
  await copyFile(path.join(plan.runDir, 'pipeline_config.yaml'), path.join(staging, 'pipeline_config.yaml'));
  const counts = {
    ...args.funnel,
    previous_pivots: union.previous,
    new_mixed: published.counts.mixed ?? 0,
    new_all_pass: published.counts.all_pass ?? 0,
    new_all_fail: published.counts.all_fail ?? 0,
    added: union.added,
    pivots,
  };
  const versionFile = path.join(staging, 'version.json');
  const version = {
    version: versionId,
    previous_version: latest?.id ?? null,
    kind: 'nightly',
    sources: nightly.newSources.map((s) => ({ path: s.path, size: s.size, sha256: s.sha256 })),
    counts,
    simulated_policy: args.simulated,
  };
  await onFile(versionFile, () => writeFile(versionFile, `${JSON.stringify(version, null, 2)}\n`));
  return { versionDir: await commitVersionDir(poolDir, staging, versionId), counts };
}
