import { open } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { JsonlWriter, readJsonl } from '../jsonl';
import { renameDurably, writeFileDurably } from '../durable';
import { JsonlError } from '../errors';
import type { CompletionSummary, GroupLevelMetrics } from './profile';
import { streamedProfile, tableProfile, type Profiled } from './profiled';
import { gym070AgentRows } from './repeats';
export { RewardProfileError } from '../errors';
import { orjsonDumps } from '../pythonJsonDumps';
import { byRunLabel } from './runLabelled';
import { environmentServerStamp } from '../runLabels';
import { NotInKeyOrder, type ProfiledInput, type ProfiledResult, type ProfileSources } from './sources';

// `ng_reward_profile` on files: reads the materialized inputs and the rollouts, profiles them and
// writes `<rollouts stem>_reward_profiling.jsonl` and `<rollouts stem>_agent_metrics.json` beside the
// rollouts, as NeMo Gym does.

export { profileCompletionSummary, profileFromData, withoutIndices } from './fromData';
export { formatProfileSummary } from './summary';
export type { AgentLevelMetrics, CompletionSummary, GroupLevelMetrics } from './profile';
export type { ProfiledInput, ProfiledResult, ProfileSources } from './sources';

const rolloutKeySchema = {
  _ng_task_index: z.number().int().nonnegative(),
  _ng_rollout_index: z.number().int().nonnegative(),
};
const profiledRowSchema = z.looseObject({ ...rolloutKeySchema, agent_ref: z.looseObject({ name: z.string() }) });
const profiledResultSchema = z.looseObject({ ...rolloutKeySchema, response: z.looseObject({}) });
/** 0.7.0 profiles a rollout whose `response` is missing or null as one without usage. */
const profiledResultSchema070 = z.looseObject({ ...rolloutKeySchema, response: z.looseObject({}).nullish() });

export interface RewardProfileOutputs {
  rewardProfilingPath: string;
  agentMetricsPath: string;
  /** Written when following NeMo Gym 0.7.0. */
  repeatLevelMetricsPath?: string;
  /** Rollouts left out of the statistics for their `mask_sample` (NeMo Gym 0.7.0). */
  masked?: number;
  summary: CompletionSummary;
  /** Group rows written, one per task with a completed rollout. */
  tasks: number;
}

/** Upstream's `Path.with_stem(stem + suffix).with_suffix(ext)` next to the rollouts file. */
export function rewardProfileOutputPaths(rolloutsPath: string): {
  rewardProfilingPath: string;
  agentMetricsPath: string;
  repeatLevelMetricsPath: string;
} {
  const { dir, name } = path.parse(rolloutsPath);
  return {
    rewardProfilingPath: path.join(dir, `${name}_reward_profiling.jsonl`),
    agentMetricsPath: path.join(dir, `${name}_agent_metrics.json`),
    repeatLevelMetricsPath: path.join(dir, `${name}_repeat_level_metrics.json`),
  };
}

async function* validated<T extends z.ZodType>(
  file: string,
  schema: T,
): AsyncGenerator<{ line: number; byteOffset: number; byteLength: number; text: string; value: z.infer<T> }> {
  for await (const record of readJsonl(file)) {
    const check = schema.safeParse(record.value);
    if (!check.success) {
      const issue = check.error.issues[0]!;
      throw new JsonlError(file, record.line, `${issue.path.map(String).join('.') || 'line'}: ${issue.message}`);
    }
    yield {
      line: record.line,
      byteOffset: record.byteOffset,
      byteLength: record.byteLength,
      text: record.text!,
      value: record.value as z.infer<T>,
    };
  }
}

export interface RewardProfileOptions {
  materializedInputsPath: string;
  rolloutsPath: string;
  allowPartialRollouts?: boolean;
  /** Each group row as written, its `sample` left out: for callers that summarize the tasks. */
  onGroup?: (row: GroupLevelMetrics) => void;
  /** The materialized inputs are orjson's own bytes (a pipeline's materialization writes them so):
   * samples are then cut out of their lines rather than decoded and written again. */
  canonicalInputs?: boolean;
  /** Whose files to write: NeMo Gym 0.7.0's (the default) or 0.4.0's (no repeat-level metrics,
   * no masking, one group a task). */
  nemoGymVersion?: NemoGymVersion;
}

export type NemoGymVersion = '0.4.0' | '0.7.0';

const followsGym070 = (opts: RewardProfileOptions) => (opts.nemoGymVersion ?? '0.7.0') === '0.7.0';

async function* resultsOfFile(rolloutsPath: string, gym070: boolean): AsyncGenerator<ProfiledResult> {
  for await (const { value, text } of validated(
    rolloutsPath,
    gym070 ? profiledResultSchema070 : profiledResultSchema,
  )) {
    yield { task: value._ng_task_index, rollout: value._ng_rollout_index, result: value, text };
  }
}

async function* inputsOfFile(materializedInputsPath: string): AsyncGenerator<ProfiledInput> {
  for await (const { value, byteOffset, byteLength } of validated(materializedInputsPath, profiledRowSchema)) {
    const environmentServer = environmentServerStamp(value);
    yield {
      task: value._ng_task_index,
      rollout: value._ng_rollout_index,
      agentName: value.agent_ref.name,
      ...(environmentServer === undefined ? {} : { environmentServer }),
      byteOffset,
      byteLength,
    };
  }
}

/** `ng_reward_profile` of a materialized inputs file and a rollouts file, as NeMo Gym runs it. */
export async function writeRewardProfile(opts: RewardProfileOptions): Promise<RewardProfileOutputs> {
  return writeRewardProfileOf(
    {
      results: () => resultsOfFile(opts.rolloutsPath, followsGym070(opts)),
      inputs: () => inputsOfFile(opts.materializedInputsPath),
    },
    opts,
  );
}

/**
 * The same profile from results and inputs read some other way (a pipeline reads indexes it wrote
 * beside the files); the files are still where `sample` lines are read from and outputs go. Sources
 * in key order are profiled a task at a time (rewardProfile/stream.ts); any others in tables.
 */
export async function writeRewardProfileOf(
  sources: ProfileSources,
  opts: RewardProfileOptions,
): Promise<RewardProfileOutputs> {
  const { repeatLevelMetricsPath, ...outputs } = rewardProfileOutputPaths(opts.rolloutsPath);
  const gym070 = followsGym070(opts);
  // 0.7.0 groups by what ran each rollout (its environment server stamp, else its agent); 0.4.0 by agent.
  const grouped = gym070 ? await byRunLabel(sources) : sources;
  const rules = {
    gym070,
    allowPartialRollouts: opts.allowPartialRollouts ?? false,
    canonicalInputs: opts.canonicalInputs ?? false,
  };
  const inputsFile = await open(opts.materializedInputsPath, 'r');
  try {
    let profile: Profiled;
    try {
      profile = await streamedProfile(grouped, inputsFile, rules);
    } catch (err) {
      if (!(err instanceof NotInKeyOrder)) throw err;
      profile = await tableProfile(grouped, inputsFile, rules);
    }
    // Written under temporary names and renamed, so a crash never leaves a half profile that looks done.
    const profilingTmp = `${outputs.rewardProfilingPath}.tmp`;
    const writer = await JsonlWriter.open(profilingTmp);
    let tasks = 0;
    try {
      for await (const { row, typed } of profile.groups) {
        await writer.writeLine(`${orjsonDumps(typed)}\n`);
        opts.onGroup?.(row);
        tasks++;
      }
    } finally {
      await writer.close();
    }
    await renameDurably([[profilingTmp, outputs.rewardProfilingPath]]);
    if (!gym070) {
      await writeFileDurably(outputs.agentMetricsPath, orjsonDumps(profile.agents()));
      return { ...outputs, summary: profile.summary, tasks };
    }
    const coverage = profile.coverage();
    let masked = 0;
    for (const entries of coverage.values())
      for (const [k, n] of entries) if (k === 'coverage/masked_rollouts') masked += Number(n);
    const { agents, repeats } = gym070AgentRows(profile.agents(), profile.agentRollouts(), profile.columns, coverage);
    await writeFileDurably(outputs.agentMetricsPath, orjsonDumps(agents));
    await writeFileDurably(repeatLevelMetricsPath, orjsonDumps(repeats));
    return { ...outputs, repeatLevelMetricsPath, masked, summary: profile.summary, tasks };
  } finally {
    await inputsFile.close();
  }
}
