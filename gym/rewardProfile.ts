import { open, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { readJsonl } from './jsonl';
import { JsonlError } from './errors';
import {
  prepareForSerialization,
  profileCompletionSummary,
  profileFromData,
  type CompletionSummary,
  type GroupLevelMetrics,
} from './rewardProfile/profile';
export { RewardProfileError } from './errors';
import { orjsonDumps, pythonRound } from './pythonJsonDumps';
import { RolloutNumberKinds } from './rewardProfile/pythonTypes';

// `ng_reward_profile` on files: reads the materialized inputs and the rollouts, profiles them and
// writes `<rollouts stem>_reward_profiling.jsonl` and `<rollouts stem>_agent_metrics.json` beside the
// rollouts, as NeMo Gym does.

export {
  prepareForSerialization,
  profileCompletionSummary,
  profileFromData,
  type AgentLevelMetrics,
  type CompletionSummary,
  type GroupLevelMetrics,
} from './rewardProfile/profile';

type Row = Record<string, unknown>;

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
  /**
   * The group-level stats as written (histograms dropped), one per task with a completed rollout.
   * Their `sample` holds only `agent_ref`: full samples are in the file, not kept in memory.
   */
  groupLevel: GroupLevelMetrics[];
}

/** Upstream's `Path.with_stem(stem + suffix).with_suffix(ext)` next to the rollouts file. */
export function rewardProfileOutputPaths(rolloutsPath: string): { rewardProfilingPath: string; agentMetricsPath: string } {
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
    yield { line: record.line, byteOffset: record.byteOffset, byteLength: record.byteLength, text: record.text!, value: record.value as z.infer<T> };
  }
}

/**
 * Only what profiling reads of a result: numeric and boolean fields, `reward` as is, and
 * `response.usage`. Trajectories are dropped while reading, so memory follows the number of
 * rollouts rather than their size.
 */
function projectResult(result: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(result)) {
    if (k === 'response') out.response = { usage: (v as Row).usage };
    else if (k === 'reward' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

export async function writeRewardProfile(opts: {
  materializedInputsPath: string;
  rolloutsPath: string;
  allowPartialRollouts?: boolean;
}): Promise<RewardProfileOutputs> {
  const results: Row[] = [];
  const kinds = new RolloutNumberKinds();
  for await (const { value, text } of validated(opts.rolloutsPath, profiledResultSchema)) {
    results.push(projectResult(value));
    kinds.add(value._ng_task_index, value._ng_rollout_index, text);
  }
  // Upstream sorts the results before profiling; it decides which duplicate key is reported first.
  results.sort(
    (a, b) =>
      (a._ng_task_index as number) - (b._ng_task_index as number) ||
      (a._ng_rollout_index as number) - (b._ng_rollout_index as number),
  );

  // Only the row of each task's lowest completed rollout becomes the `sample`. Samples are the bulk
  // of a profile (full prompts and tool lists), so only their place in the file is kept while
  // profiling, and each is read back when its group row is written: memory then follows the number
  // of rollouts, not the size of their prompts.
  const sampleRollout = new Map<number, number>();
  for (const r of results) {
    const task = r._ng_task_index as number;
    if (!sampleRollout.has(task)) sampleRollout.set(task, r._ng_rollout_index as number);
  }
  const rows: Row[] = [];
  const samplePlaces = new Map<number, { offset: number; length: number }>();
  for await (const { value, byteOffset, byteLength } of validated(opts.materializedInputsPath, profiledRowSchema)) {
    const { _ng_task_index: task, _ng_rollout_index: rollout } = value;
    if (sampleRollout.get(task) === rollout) samplePlaces.set(task, { offset: byteOffset, length: byteLength });
    rows.push({ _ng_task_index: task, _ng_rollout_index: rollout, agent_ref: { name: value.agent_ref.name } });
  }
  const { groupLevel, agentLevel } = profileFromData(rows, results, opts.allowPartialRollouts ?? false);
  const summary = profileCompletionSummary(rows, results);
  const outputs = rewardProfileOutputPaths(opts.rolloutsPath);

  // Written under a temporary name and renamed, so a crash never leaves a half profile that looks done.
  const profilingTmp = `${outputs.rewardProfilingPath}.tmp`;
  const written = prepareForSerialization(groupLevel);
  const writer = await open(profilingTmp, 'w');
  const inputs = await open(opts.materializedInputsPath, 'r');
  try {
    for (const row of written) {
      const place = samplePlaces.get(row._ng_task_index as number)!;
      const line = Buffer.alloc(place.length);
      await inputs.read(line, 0, place.length, place.offset);
      // The sample key already sits where upstream puts it; only its value is filled in, re-read with
      // Python's types so its numbers keep the form they have in the materialized inputs.
      await writer.write(`${orjsonDumps(kinds.groupRow(row, line.toString('utf8').replace(/^\uFEFF/, '').trimEnd()))}\n`);
    }
  } finally {
    await inputs.close();
    await writer.close();
  }
  await rename(profilingTmp, outputs.rewardProfilingPath);
  const agentTmp = `${outputs.agentMetricsPath}.tmp`;
  await writeFile(agentTmp, orjsonDumps(prepareForSerialization(agentLevel).map((row) => kinds.agentRow(row))));
  await rename(agentTmp, outputs.agentMetricsPath);

  return { ...outputs, summary, groupLevel: written };
}

/** Python's `f"{x:.2f}"`: rounds the exact binary value half to even, where `toFixed` rounds half up. */
function percent(x: number): string {
  return pythonRound(x, 2).toFixed(2);
}

/** The lines `ng_reward_profile` prints after profiling. */
export function formatProfileSummary(outputs: Pick<RewardProfileOutputs, 'summary' | 'rewardProfilingPath' | 'agentMetricsPath'>): string {
  const s = outputs.summary;
  return [
    'Profiling outputs:',
    `Reward profile completion: ${s.completed_rollout_rows}/${s.expected_rollout_rows} rollout rows (${percent(s.reward_profile_completion_pct)}%)`,
    `Input rows: ${s.total_input_rows} total; ${s.complete_input_rows} complete; ${s.partial_input_rows} partial; ${s.missing_input_rows} without rollouts dropped from output.`,
    `Reward profiling outputs: ${outputs.rewardProfilingPath}`,
    `Agent-level metrics: ${outputs.agentMetricsPath}`,
  ].join('\n');
}
