import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { stageActivityOptions } from './activityOptions';
import { curriculumPoolQuery, policyCheckpointUpdate, roundsQuery } from '../contracts/temporal';
import { collectRolloutsWorkflow } from './collectRollouts';
import type { PivotCurriculumInput } from '../contracts/workflowInputs';
import type { CurriculumState, PolicyCheckpoint } from '../contracts/poolPayloads';

// The pivot loop. The trainer sends each new policy checkpoint as an Update; the pool is re-profiled
// with that policy (the chunked local-profile sub-pipeline), pivots it now always or never solves
// retire, the rest are published as a new version whose path is the Update's result. One round per
// run: the workflow then continues as new carrying only the pool path and the rounds history.

const { startCurriculum, prepareCurriculumRound, ensureServers, publishCurriculumRound } =
  proxyActivities<PivotActivities>(stageActivityOptions);

export async function pivotCurriculumWorkflow(input: PivotCurriculumInput, carried?: CurriculumState): Promise<never> {
  const workflowId = workflowInfo().workflowId;
  // Handlers are registered before the first await, so an Update sent right after the start is not rejected.
  let current: CurriculumState | undefined = carried;
  let busy = false;
  let roundsThisRun = 0;
  setHandler(roundsQuery, () => current?.rounds ?? []);
  setHandler(curriculumPoolQuery, () => current?.poolPath ?? null);

  setHandler(
    policyCheckpointUpdate,
    async (checkpoint) => {
      // Checkpoints are profiled one at a time, in the order their Updates were accepted.
      await condition(() => current !== undefined && !busy);
      const state = current!;
      busy = true;
      try {
        const round = state.rounds.length + 1;
        const roundPlan = await prepareCurriculumRound({ input, state, checkpoint, round });
        if (roundPlan.poolSize === 0) {
          throw ApplicationFailure.nonRetryable(
            'the curriculum pool is empty (every pivot retired); start a new curriculum or set top_up_to to refill it from nightly versions',
            'EmptyPool',
          );
        }
        const servers = await ensureServers(roundPlan.plan);
        const profiled = await executeChild(collectRolloutsWorkflow, {
          workflowId: `${workflowId}/${roundPlan.plan.runId}/local_profile`,
          args: [
            {
              plan: roundPlan.plan,
              stage: 'local_profile',
              inputPath: roundPlan.candidatesPath,
              outPrefix: `${roundPlan.roundDir}/local_profile`,
            },
          ],
        });
        const result = await publishCurriculumRound({
          state,
          round,
          roundPlan,
          checkpoint,
          localProfilePath: profiled.profile.rewardProfilingPath,
          simulated: servers.simulated,
        });
        state.rounds.push(result);
        state.poolPath = result.pivotsPath;
        roundsThisRun += 1;
        return result;
      } finally {
        busy = false;
      }
    },
    {
      validator: (checkpoint: PolicyCheckpoint | undefined) => {
        if (typeof checkpoint?.model !== 'string' || checkpoint.model === '')
          throw new Error('policyCheckpoint needs { model: "<model name>" }');
      },
    },
  );

  current ??= await startCurriculum({ input, workflowId });
  await condition(() => roundsThisRun > 0 && !busy && allHandlersFinished());
  return continueAsNew<typeof pivotCurriculumWorkflow>(input, current);
}
