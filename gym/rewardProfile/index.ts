import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { JsonlWriter, readJsonl } from '../jsonl';
import { renameDurably, writeFileDurably } from '../durable';
import { JsonlError } from '../errors';
import { completionSummary } from './completion';
import { profileTables, type CompletionSummary, type GroupLevelMetrics, type Profile } from './profile';
import { gym070AgentRows } from './repeats';
import { InputTable, RolloutTable } from './table';
export { RewardProfileError } from '../errors';
import { orjsonDumps } from '../pythonJsonDumps';
import { canonicalSample, RolloutNumberKinds, sampleValue } from './pythonTypes';
import { profileKeyOrdered, type StreamedGroup } from './stream';
import { NotInKeyOrder, type ProfiledInput, type ProfiledResult, type ProfileSources } from './sources';
import type { PyDict, PyValue } from '../pythonJson';

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

/**
 * Where each group's `sample` is in the materialized inputs: the row of the group's lowest measured
 * rollout. Samples are the bulk of a profile (full prompts and tool lists), so only their place is
 * kept while profiling, and each is read back when its group row is written. Only one row a
 * (task, agent) is noted: a group is a task, or under NeMo Gym 0.7.0's fan-out a (task, agent).
 */
class SamplePlaces {
  private readonly best = new Map<string, { position: number; rollout: number; place: LinePlace }>();
  private byPosition: Map<number, LinePlace> | undefined;

  constructor(
    private readonly results: RolloutTable,
    private readonly gym070: boolean,
  ) {}

  note(inputPosition: number, task: number, rollout: number, agent: string, place: LinePlace): void {
    const i = this.results.find(task, rollout);
    if (i === undefined || (this.gym070 && this.results.masked.has(i))) return;
    const key = this.gym070 ? `${task}\0${agent}` : String(task);
    const seen = this.best.get(key);
    if (!seen || rollout < seen.rollout) this.best.set(key, { position: inputPosition, rollout, place });
  }

  place(inputPosition: number): LinePlace {
    this.byPosition ??= new Map([...this.best.values()].map((b) => [b.position, b.place]));
    return this.byPosition.get(inputPosition)!;
  }
}

interface LinePlace {
  byteOffset: number;
  byteLength: number;
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
    yield {
      task: value._ng_task_index,
      rollout: value._ng_rollout_index,
      agentName: value.agent_ref.name,
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
  const inputsFile = await open(opts.materializedInputsPath, 'r');
  try {
    let profile: Profiled;
    try {
      profile = await streamedProfile(sources, opts, inputsFile, gym070);
    } catch (err) {
      if (!(err instanceof NotInKeyOrder)) throw err;
      profile = await tableProfile(sources, opts, inputsFile, gym070);
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

/** A profile either way: group rows to write one by one, then the agent rows. */
interface Profiled extends Pick<Profile, 'agentRollouts' | 'coverage' | 'columns'> {
  summary: CompletionSummary;
  groups: AsyncIterable<StreamedGroup>;
  agents(): PyDict[];
}

/** A sample as upstream writes it: the input line with Python's types, indices removed. */
async function readSample(
  file: FileHandle,
  place: { byteOffset: number; byteLength: number },
  canonical: boolean,
): Promise<PyValue> {
  const line = Buffer.alloc(place.byteLength);
  // One short read of a line just written, from the page cache: synchronous costs less than a trip
  // through the thread pool, once per task.
  readSync(file.fd, line, 0, line.length, place.byteOffset);
  const text = line
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimEnd();
  return (canonical ? (canonicalSample(text) as unknown as PyValue | undefined) : undefined) ?? sampleValue(text);
}

async function streamedProfile(
  sources: ProfileSources,
  opts: RewardProfileOptions,
  inputsFile: FileHandle,
  gym070: boolean,
): Promise<Profiled> {
  const profile = await profileKeyOrdered(sources, opts.allowPartialRollouts ?? false, gym070);
  return {
    ...profile,
    summary: profile.summary,
    groups: profile.groups((input) => readSample(inputsFile, input, opts.canonicalInputs ?? false)),
    agents: () => profile.agents(),
  };
}

async function tableProfile(
  sources: ProfileSources,
  opts: RewardProfileOptions,
  inputsFile: FileHandle,
  gym070: boolean,
): Promise<Profiled> {
  const results = new RolloutTable(true);
  const kinds = new RolloutNumberKinds();
  for await (const { task, rollout, result, text } of sources.results()) {
    const position = results.add(task, rollout, result);
    // A masked rollout is no part of the stats frame, so its number kinds decide nothing.
    if (!(gym070 && results.masked.has(position))) kinds.add(position, text);
  }
  const inputs = new InputTable();
  const samples = new SamplePlaces(results, gym070);
  for await (const { task, rollout, agentName, byteOffset, byteLength } of sources.inputs()) {
    samples.note(inputs.add(task, rollout, agentName), task, rollout, agentName, { byteOffset, byteLength });
  }
  const profile = profileTables(inputs, results, opts.allowPartialRollouts ?? false, gym070);
  async function* groups(): AsyncGenerator<StreamedGroup> {
    for (const { row, rollouts } of profile.groups((i) => i)) {
      // The sample key already sits where upstream puts it; only its value is filled in, re-read with
      // Python's types so its numbers keep the form they have in the materialized inputs.
      const typed = kinds.groupRow(
        row,
        rollouts,
        await readSample(inputsFile, samples.place(row.sample as number), opts.canonicalInputs ?? false),
      );
      const { sample: _sample, ...stats } = row;
      yield { row: stats, typed };
    }
  }
  return {
    ...profile,
    summary: completionSummary(inputs, results),
    groups: groups(),
    agents: () => profile.agents().map((row) => kinds.agentRow(row)),
  };
}
