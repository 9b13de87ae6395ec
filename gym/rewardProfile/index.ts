import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { JsonlWriter, readJsonl } from '../jsonl';
import { renameDurably, writeFileDurably } from '../durable';
import { JsonlError } from '../errors';
import { completionSummary, profileTables, type CompletionSummary, type GroupLevelMetrics } from './profile';
import { InputTable, NumberColumn, RolloutTable } from './table';
export { RewardProfileError } from '../errors';
import { orjsonDumps, pythonRound } from '../pythonJsonDumps';
import { canonicalSample, RolloutNumberKinds, sampleValue } from './pythonTypes';
import {
  NotInKeyOrder,
  profileKeyOrdered,
  type ProfiledInput,
  type ProfiledResult,
  type ProfileSources,
  type StreamedGroup,
} from './stream';
import type { PyDict, PyValue } from '../pythonJson';

// `ng_reward_profile` on files: reads the materialized inputs and the rollouts, profiles them and
// writes `<rollouts stem>_reward_profiling.jsonl` and `<rollouts stem>_agent_metrics.json` beside the
// rollouts, as NeMo Gym does.

export { profileCompletionSummary, profileFromData, withoutIndices } from './fromData';
export type { AgentLevelMetrics, CompletionSummary, GroupLevelMetrics } from './profile';
export type { ProfiledInput, ProfiledResult, ProfileSources } from './stream';

const rolloutKeySchema = {
  _ng_task_index: z.number().int().nonnegative(),
  _ng_rollout_index: z.number().int().nonnegative(),
};
const profiledRowSchema = z.looseObject({ ...rolloutKeySchema, agent_ref: z.looseObject({ name: z.string() }) });
const profiledResultSchema = z.looseObject({ ...rolloutKeySchema, response: z.looseObject({}) });

export interface RewardProfileOutputs {
  rewardProfilingPath: string;
  agentMetricsPath: string;
  summary: CompletionSummary;
  /** Group rows written, one per task with a completed rollout. */
  tasks: number;
}

/** Upstream's `Path.with_stem(stem + suffix).with_suffix(ext)` next to the rollouts file. */
export function rewardProfileOutputPaths(rolloutsPath: string): {
  rewardProfilingPath: string;
  agentMetricsPath: string;
} {
  const { dir, name } = path.parse(rolloutsPath);
  return {
    rewardProfilingPath: path.join(dir, `${name}_reward_profiling.jsonl`),
    agentMetricsPath: path.join(dir, `${name}_agent_metrics.json`),
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
 * Where each group's `sample` is in the materialized inputs: the row of the task's lowest completed
 * rollout. Samples are the bulk of a profile (full prompts and tool lists), so only their place is
 * kept while profiling, and each is read back when its group row is written. Only sample rows are
 * noted (one a task, where a column by input position would take a slot for every row).
 */
class SamplePlaces {
  private readonly position = new NumberColumn();
  private readonly offset = new NumberColumn();
  private readonly length = new NumberColumn();
  private count = 0;

  constructor(private readonly results: RolloutTable) {}

  /** Input positions come in increasing order, as the inputs are read. */
  noteIfSample(
    inputPosition: number,
    task: number,
    rollout: number,
    place: { byteOffset: number; byteLength: number },
  ): void {
    const first = this.results.firstOfTask(task);
    if (first === undefined || this.results.rollout.get(first) !== rollout) return;
    this.position.set(this.count, inputPosition);
    this.offset.set(this.count, place.byteOffset);
    this.length.set(this.count++, place.byteLength);
  }

  place(inputPosition: number): { byteOffset: number; byteLength: number } {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.position.get(mid) < inputPosition) lo = mid + 1;
      else hi = mid;
    }
    return { byteOffset: this.offset.get(lo), byteLength: this.length.get(lo) };
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
}

async function* resultsOfFile(rolloutsPath: string): AsyncGenerator<ProfiledResult> {
  for await (const { value, text } of validated(rolloutsPath, profiledResultSchema)) {
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
    { results: () => resultsOfFile(opts.rolloutsPath), inputs: () => inputsOfFile(opts.materializedInputsPath) },
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
  const outputs = rewardProfileOutputPaths(opts.rolloutsPath);
  const inputsFile = await open(opts.materializedInputsPath, 'r');
  try {
    let profile: Profiled;
    try {
      profile = await streamedProfile(sources, opts, inputsFile);
    } catch (err) {
      if (!(err instanceof NotInKeyOrder)) throw err;
      profile = await tableProfile(sources, opts, inputsFile);
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
    await writeFileDurably(outputs.agentMetricsPath, orjsonDumps(profile.agents()));
    return { ...outputs, summary: profile.summary, tasks };
  } finally {
    await inputsFile.close();
  }
}

/** A profile either way: group rows to write one by one, then the agent rows. */
interface Profiled {
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
): Promise<Profiled> {
  const profile = await profileKeyOrdered(sources, opts.allowPartialRollouts ?? false);
  return {
    summary: profile.summary,
    groups: profile.groups((input) => readSample(inputsFile, input, opts.canonicalInputs ?? false)),
    agents: () => profile.agents(),
  };
}

async function tableProfile(
  sources: ProfileSources,
  opts: RewardProfileOptions,
  inputsFile: FileHandle,
): Promise<Profiled> {
  const results = new RolloutTable(true);
  const kinds = new RolloutNumberKinds();
  for await (const { task, rollout, result, text } of sources.results())
    kinds.add(results.add(task, rollout, result), text);
  const inputs = new InputTable();
  const samples = new SamplePlaces(results);
  for await (const { task, rollout, agentName, byteOffset, byteLength } of sources.inputs()) {
    samples.noteIfSample(inputs.add(task, rollout, agentName), task, rollout, { byteOffset, byteLength });
  }
  const profile = profileTables(inputs, results, opts.allowPartialRollouts ?? false);
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
    summary: completionSummary(inputs, results),
    groups: groups(),
    agents: () => profile.agents().map((row) => kinds.agentRow(row)),
  };
}

/** Python's `f"{x:.2f}"`: rounds the exact binary value half to even, where `toFixed` rounds half up. */
function percent(x: number): string {
  return pythonRound(x, 2).toFixed(2);
}

/** The lines `ng_reward_profile` prints after profiling. */
export function formatProfileSummary(
  outputs: Pick<RewardProfileOutputs, 'summary' | 'rewardProfilingPath' | 'agentMetricsPath'>,
): string {
  const s = outputs.summary;
  return [
    'Profiling outputs:',
    `Reward profile completion: ${s.completed_rollout_rows}/${s.expected_rollout_rows} rollout rows (${percent(s.reward_profile_completion_pct)}%)`,
    `Input rows: ${s.total_input_rows} total; ${s.complete_input_rows} complete; ${s.partial_input_rows} partial; ${s.missing_input_rows} without rollouts dropped from output.`,
    `Reward profiling outputs: ${outputs.rewardProfilingPath}`,
    `Agent-level metrics: ${outputs.agentMetricsPath}`,
  ].join('\n');
}
