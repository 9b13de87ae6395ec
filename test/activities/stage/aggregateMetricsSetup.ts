import { MockActivityEnvironment } from '@temporalio/testing';
import { writeAggregateMetrics } from '../../../activities/stage/aggregateMetrics';
import { claimStageFence } from '../../../activities/chunk/fence';

// Shared by the aggregate-metrics activity tests (aggregateMetrics.test.ts and
// aggregateMetricsAgents.test.ts).

export type Row = Record<string, any>;

/** The profile key that keeps a stage's files 0.4.0's. */
export const GYM_040 = { profile: { nemo_gym_version: '0.4.0' } };

/** The aggregate metrics as the finish writes them: an activity publishing through the stage's fence. */
export const aggregate = (input: Parameters<typeof writeAggregateMetrics>[0]) =>
  new MockActivityEnvironment().run(
    async (i: typeof input) => writeAggregateMetrics(i, await claimStageFence(i.rolloutsPath.replace(/\.jsonl$/, ''))),
    input,
  ) as Promise<string | undefined>;
