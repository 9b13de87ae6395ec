import { existsSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import YAML from 'yaml';
import { readJsonl } from '../../gym/jsonl';
import { PIVOTS_FILE } from '../../gym/publish';
import { localProfileRowSchema, localProfileStats, type LocalProfileStats } from '../../gym/selection';
import { retirements, topUp, type Retirement } from '../../gym/curriculum';
import { pivotCurriculumInputSchema, policyCheckpointSchema } from '../../contracts/workflowInputs';
import type {
  CurriculumRound,
  CurriculumRoundPlan,
  CurriculumState,
  PolicyCheckpoint,
} from '../../contracts/poolPayloads';
import { pivotAgentName } from '../../contracts/stageSettings';
import { ConfigError, InvalidInputError } from '../../contracts/errors';
import { describeIssues } from '../../contracts/config';
import { resolveInside } from '../run/configFile';
import { loadRunContext, poolDirOf, type WorkerSettings } from '../run/runContext';
import { publishBatch } from '../run/publish';
import {
  commitVersionDir,
  committedVersion,
  freeVersionId,
  lastVersionId,
  latestVersion,
  readRows,
  stagingDir,
  validateVersion,
  writeRows,
} from './pool';
import { checkRunManifest, currentRunManifest, fileDigest, recordRunManifest, textDigest } from '../run/runManifest';
import { mkdirDurably, syncFiles, writeFileDurably } from '../../gym/durable';
import { onFile } from '../../gym/fileError';

// The pivot loop: each policy checkpoint re-profiles the curriculum pool, and pivots the policy now
// always solves (learned) or never solves (unsolvable) retire. A curriculum lives in
// `<pool>/curricula/<workflow id>/` with its own versions/ and `latest`, plus the retired pivots.

const RETIRED_FILE = 'retired.jsonl';

/** Fixes the starting pool of a new curriculum (a copy, so later nightly versions do not change it). */
export async function startCurriculum(
  settings: WorkerSettings,
  args: { input: unknown; workflowId: string },
): Promise<CurriculumState> {
  const ctx = await loadRunContext(settings, pivotCurriculumInputSchema, args.input);
  const poolDir = await poolDirOf(ctx);
  const curriculumDir = path.join(poolDir, 'curricula', args.workflowId.replace(/[^A-Za-z0-9._-]/g, '_'));
  let source: string;
  if (ctx.input.initial_pool !== undefined) {
    try {
      source = resolveInside(ctx.baseDir, ctx.baseDir, ctx.input.initial_pool);
    } catch (err) {
      if (err instanceof ConfigError) throw new InvalidInputError(`workflow input: initial_pool: ${err.message}`);
      throw err;
    }
  } else {
    const latest = await latestVersion(poolDir);
    if (latest === null)
      throw new ConfigError(
        `no initial_pool given and the pool ${poolDir} has no published version yet: publish its first version ` +
          '(run the nightly schedule once: pivot-miner schedule trigger <schedule-id> --wait), ' +
          'or start the curriculum from a pivots.jsonl of your own (--initial-pool, initial_pool)',
      );
    source = latest.pivotsPath;
  }
  // A curriculum started again under its workflow id resumes its directory: same config, inputs and pool.
  const identity = {
    ...ctx.config,
    curriculum: { initial_pool: ctx.input.initial_pool ?? null, top_up_to: ctx.input.top_up_to ?? null },
  };
  const manifest = currentRunManifest(identity, {
    initial_pool: await fileDigest(source, path.relative(ctx.baseDir, source)),
  });
  const recorded = await checkRunManifest(curriculumDir, manifest, `the curriculum ${curriculumDir}`);
  await mkdirDurably(curriculumDir);
  const poolPath = path.join(curriculumDir, 'initial_pool.jsonl');
  await copyFile(source, poolPath);
  await syncFiles([poolPath]);
  await recordRunManifest(curriculumDir, manifest, recorded);
  return { curriculumDir, poolPath, rounds: [] };
}

/** The round's config (the checkpoint as the local-profile model) and its pool file, topped up if asked. */
export async function prepareCurriculumRound(
  settings: WorkerSettings,
  args: { input: unknown; state: CurriculumState; checkpoint: unknown; round: number },
): Promise<CurriculumRoundPlan> {
  const parsed = policyCheckpointSchema.safeParse(args.checkpoint);
  if (!parsed.success) throw new InvalidInputError(describeIssues('policyCheckpoint', parsed.error));
  const checkpoint = parsed.data;
  const ctx = await loadRunContext(settings, pivotCurriculumInputSchema, args.input);
  const { input, config, baseDir } = ctx;
  config.local_profile.model.model = checkpoint.model;
  if (checkpoint.endpoint !== undefined) config.local_profile.model.url = checkpoint.endpoint;

  const roundId = `round-${String(args.round).padStart(3, '0')}`;
  const roundDir = path.join(args.state.curriculumDir, 'runs', roundId);

  const pool = await readRows(args.state.poolPath);
  let toppedUp = 0;
  if (input.top_up_to !== undefined && pool.length < input.top_up_to) {
    const latest = await latestVersion(await poolDirOf(ctx));
    if (latest !== null) {
      const added = topUp(
        pool,
        await readRows(latest.pivotsPath),
        input.top_up_to,
        await retiredKeys(args.state.curriculumDir),
      );
      pool.push(...added);
      toppedUp = added.length;
    }
  }
  const candidatesPath = path.join(roundDir, 'pool.jsonl');
  // A round's directory is reused only by the same round: a retried activity, never another
  // checkpoint or pool, whose samples would otherwise be mixed with this round's shards.
  const manifest = currentRunManifest(config, {
    pool: textDigest(pool.map((row) => `${JSON.stringify(row)}\n`).join(''), 'pool.jsonl'),
  });
  const recorded = await checkRunManifest(roundDir, manifest, `curriculum ${roundId}`);
  await mkdirDurably(roundDir);
  await writeFileDurably(path.join(roundDir, 'pipeline_config.yaml'), YAML.stringify(config));
  await writeRows(candidatesPath, pool);
  await recordRunManifest(roundDir, manifest, recorded);
  return {
    plan: { runId: roundId, runDir: roundDir, baseDir, config },
    roundDir,
    candidatesPath,
    poolSize: pool.length,
    toppedUp,
  };
}

async function retiredKeys(curriculumDir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path.join(curriculumDir, RETIRED_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { key: string }).key);
}

interface RoundPublishArgs {
  state: CurriculumState;
  round: number;
  roundPlan: CurriculumRoundPlan;
  checkpoint: PolicyCheckpoint;
  localProfilePath: string;
  simulated: boolean;
}

/**
 * Publishes the mixed pivots as the curriculum's next version and records what retired and why. A
 * retry that finds its version committed (the same round and checkpoint) records the retirements only.
 */
export async function publishCurriculumRound(args: RoundPublishArgs): Promise<CurriculumRound> {
  const { state, roundPlan } = args;
  const outcome = await roundOutcome(args);
  const last = lastVersionId(state.curriculumDir, roundPlan.plan.runId);
  const own =
    last === null
      ? null
      : await committedVersion(
          state.curriculumDir,
          last,
          (v) =>
            v.kind === 'curriculum_round' && v.round === args.round && isDeepStrictEqual(v.checkpoint, args.checkpoint),
        );
  const round = own
    ? roundResult(args, outcome, path.basename(own.dir), (await readRows(path.join(own.dir, PIVOTS_FILE))).length)
    : await commitRoundVersion(args, outcome);
  await recordRetirements(state.curriculumDir, args.round, outcome.retired);
  return round;
}

interface RoundOutcome {
  retired: Retirement[];
  meanPassRate: number;
}

/**
 * A profile row's _ng_task_index is the candidate's line in the pool file (materialization keeps
 * first-seen order). Retirement uses the publish step's own classification, so a pivot the publish
 * step calls incomplete (a partial profile) is never retired as learned or unsolvable.
 */
async function roundOutcome(args: RoundPublishArgs): Promise<RoundOutcome> {
  const { plan } = args.roundPlan;
  const profiles = new Map<number, LocalProfileStats>();
  for await (const { value } of readJsonl(args.localProfilePath)) {
    const stats = localProfileStats(localProfileRowSchema.parse(value));
    profiles.set(stats.task_index, stats);
  }
  const pool = await readRows(args.roundPlan.candidatesPath);
  const retired = retirements(pool, profiles, plan.config.filter.allow_partial, args.round);
  const rates = [...profiles.values()].flatMap((p) => (p.pass_rate === null ? [] : [p.pass_rate]));
  const meanPassRate =
    rates.length === 0 ? 0 : Math.round((rates.reduce((a, b) => a + b, 0) / rates.length) * 1e6) / 1e6;
  return { retired, meanPassRate };
}

function roundResult(args: RoundPublishArgs, outcome: RoundOutcome, versionId: string, kept: number): CurriculumRound {
  const { poolSize, toppedUp } = args.roundPlan;
  const retiredLearned = outcome.retired.filter((r) => r.reason === 'learned').length;
  const retiredUnsolvable = outcome.retired.filter((r) => r.reason === 'unsolvable').length;
  return {
    round: args.round,
    model: args.checkpoint.model,
    trainingStep: args.checkpoint.training_step ?? null,
    poolSize,
    toppedUp,
    kept,
    retiredLearned,
    retiredUnsolvable,
    dropped: poolSize - kept - retiredLearned - retiredUnsolvable,
    meanPassRate: outcome.meanPassRate,
    versionId,
    pivotsPath: path.join(args.state.curriculumDir, 'versions', versionId, PIVOTS_FILE),
  };
}

/** Stages the round's version (published pivots, version.json, its config) and commits it. */
async function commitRoundVersion(args: RoundPublishArgs, outcome: RoundOutcome): Promise<CurriculumRound> {
  const { state, roundPlan } = args;
  const { plan } = roundPlan;
  const versionId = freeVersionId(state.curriculumDir, plan.runId);
  const staging = await stagingDir(state.curriculumDir, versionId);
  const published = await publishBatch(plan, {
    candidatesPath: roundPlan.candidatesPath,
    localProfilePath: args.localProfilePath,
    outDir: staging,
    jsonlFpath: path.join(state.curriculumDir, 'versions', versionId, PIVOTS_FILE),
    simulated: args.simulated,
    funnel: { pool: roundPlan.poolSize },
  });
  const kept = (await readRows(published.pivotsPath)).length;
  await validateVersion(
    published.pivotsPath,
    pivotAgentName(plan),
    published.gymConfigPath,
    kept,
    plan.config.convert.batch_pivots,
  );
  const round = roundResult(args, outcome, versionId, kept);
  const versionFile = path.join(staging, 'version.json');
  const version = { version: versionId, kind: 'curriculum_round', checkpoint: args.checkpoint, ...round };
  await onFile(versionFile, () => writeFile(versionFile, `${JSON.stringify(version, null, 2)}\n`));
  await copyFile(path.join(plan.runDir, 'pipeline_config.yaml'), path.join(staging, 'pipeline_config.yaml'));
  await commitVersionDir(state.curriculumDir, staging, versionId);
  return round;
}

/** Rewrites the retired file with this round's retirements in place of any a crashed attempt left. */
async function recordRetirements(curriculumDir: string, round: number, retired: Retirement[]): Promise<void> {
  const file = path.join(curriculumDir, RETIRED_FILE);
  const lines: string[] = [];
  if (existsSync(file)) {
    for await (const { value, text } of readJsonl(file))
      if ((value as Partial<Retirement>).round !== round) lines.push(text!);
  }
  lines.push(...retired.map((r) => JSON.stringify(r)));
  if (lines.length > 0) await writeRows(file, lines);
}
