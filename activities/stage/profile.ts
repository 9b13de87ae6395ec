import { NoDigest } from '../../gym/aggregateMetrics';
import { readLines } from '../../gym/jsonl';
import {
  writeRewardProfile,
  writeRewardProfileOf,
  type NemoGymVersion,
  type ProfiledResult,
  type RewardProfileOptions,
  type RewardProfileOutputs,
} from '../../gym/rewardProfile';
import { countOutcomes } from '../../gym/selection';
import { materializedInputsPath, mergedDigestsPath, readMaterializedMeta } from '../chunk/chunkIndex';
import { readRowIndex } from './rowIndex';
import type { ProfileResult } from '../../contracts/payloads';

// Reward profiling of a merged stage. The stage's own indexes stand in for the files where they can:
// the merge's digests for the rollouts and the row index for the materialized inputs, so profiling
// decodes a few hundred bytes a rollout rather than every trajectory and prompt. What it writes is
// byte for byte what `ng_reward_profile` writes from the files (test/activities/stage/profile.test.ts).

const isIndex = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A rollout's digest (`null` or one of gym/aggregateMetrics.ts rolloutDigest) as the result profiling reads. */
export function profiledResultOfDigest(text: string): ProfiledResult {
  const result = JSON.parse(text) as Record<string, unknown> | null;
  // The rollouts file is read instead wherever a rollout line might be one profiling must report
  // (the merge took these keys from the digests, so they are ints unless the data was odd).
  if (result === null || !isIndex(result._ng_task_index) || !isIndex(result._ng_rollout_index)) throw new NoDigest();
  // A digest exists only for a rollout whose `response` is an object; it keeps just its usage.
  return {
    task: result._ng_task_index,
    rollout: result._ng_rollout_index,
    result: 'response' in result ? result : { ...result, response: {} },
    text,
  };
}

async function* resultsOfDigests(digestsPath: string): AsyncGenerator<ProfiledResult> {
  for await (const { text } of readLines(digestsPath)) yield profiledResultOfDigest(text);
}

async function profileOutputs(outPrefix: string, options: RewardProfileOptions): Promise<RewardProfileOutputs> {
  const meta = await readMaterializedMeta(outPrefix);
  const agentNames = meta?.agentNames;
  const digestsPath = await mergedDigestsPath(outPrefix);
  // Stages materialized or merged before these indexes existed have only the files.
  if (agentNames && digestsPath) {
    try {
      return await writeRewardProfileOf(
        {
          results: () => resultsOfDigests(digestsPath),
          inputs: () => readRowIndex(outPrefix, agentNames, 0, Infinity, meta.environmentServers),
        },
        options,
      );
    } catch (err) {
      if (!(err instanceof NoDigest)) throw err;
    }
  }
  return writeRewardProfile(options);
}

/** Reward profiling of a merged stage, exactly as `ng_reward_profile` would write it next to the rollouts. */
export async function profileStage(input: {
  outPrefix: string;
  allowPartialRollouts: boolean;
  nemoGymVersion?: NemoGymVersion;
}): Promise<ProfileResult> {
  // Tasks are counted as their rows are written, so no run's group rows are held at once.
  const outcomes = countOutcomes([], input.allowPartialRollouts);
  // Strict mode failing on missing rollouts throws RewardProfileError: a verdict about the data,
  // which the workflows' retry policy lists as non-retryable.
  const out = await profileOutputs(input.outPrefix, {
    materializedInputsPath: materializedInputsPath(input.outPrefix),
    rolloutsPath: `${input.outPrefix}.jsonl`,
    allowPartialRollouts: input.allowPartialRollouts,
    nemoGymVersion: input.nemoGymVersion,
    canonicalInputs: true,
    onGroup: (row) => {
      for (const [outcome, n] of Object.entries(countOutcomes([row], input.allowPartialRollouts)))
        outcomes[outcome as keyof typeof outcomes] += n;
    },
  });
  return {
    rewardProfilingPath: out.rewardProfilingPath,
    agentMetricsPath: out.agentMetricsPath,
    tasks: out.tasks,
    allPass: outcomes.all_pass,
    allFail: outcomes.all_fail,
    mixed: outcomes.mixed,
  };
}
