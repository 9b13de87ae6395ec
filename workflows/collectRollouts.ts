import { continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { stageProgressQuery } from '../contracts/temporal';
import { collectStageActivityOptions, chunkActivityOptions } from './activityOptions';
import { stageSettings } from '../contracts/stageSettings';
import type { ChunkResult, CollectStageInput, CollectStageResult } from '../contracts/payloads';

// collect → profile as one reusable sub-pipeline (DESIGN §1): the collect stage runs it with the
// agent executor, local profiling runs it on pivot candidates with the single-step executor.

const { materializeStage, mergeShards, profileStage } = proxyActivities<PivotActivities>(collectStageActivityOptions);

const { runChunk } = proxyActivities<PivotActivities>(chunkActivityOptions);


const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 4000;

export async function collectRolloutsWorkflow(input: CollectStageInput): Promise<CollectStageResult> {
  const settings = stageSettings(input.plan, input.stage);
  const startedAtMs = input.resume?.startedAtMs ?? Date.now();
  let done = input.resume?.done ?? 0;
  let failed = input.resume?.failed ?? 0;
  let total = input.resume?.materialize.rows ?? 0;
  let phase = input.resume ? 'chunks' : 'materialize';

  setHandler(stageProgressQuery, () => {
    const elapsed = Math.max(1, (Date.now() - startedAtMs) / 1000);
    const rate = done / elapsed;
    return {
      stage: `${input.stage}:${phase}`,
      done,
      total,
      failed,
      rolloutsPerSecond: Math.round(rate * 100) / 100,
      etaSeconds: rate > 0 && total > done ? Math.round((total - done) / rate) : null,
    };
  });

  const materialize = input.resume?.materialize ?? (await materializeStage(input));
  total = materialize.rows;
  phase = 'chunks';

  // A sliding window of chunk activities: enough in flight to keep the servers busy, few enough that
  // a workflow's history grows by a handful of events per chunk.
  const historyLimit = input.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= historyLimit;
  let next = input.resume?.nextChunk ?? 0;
  const inFlight = new Map<number, Promise<ChunkResult>>();
  const onChunkDone = (r: ChunkResult) => {
    inFlight.delete(r.chunkIndex);
    done += r.completed + r.failed + r.alreadyDone;
    failed += r.failed;
  };
  while (next < materialize.chunks || inFlight.size > 0) {
    while (next < materialize.chunks && inFlight.size < settings.maxChunksInFlight && !mustContinueAsNew()) {
      const chunkIndex = next++;
      inFlight.set(chunkIndex, runChunk({ plan: input.plan, stage: input.stage, outPrefix: input.outPrefix, chunkIndex }));
    }
    if (inFlight.size === 0) break;
    onChunkDone(await Promise.race(inFlight.values()));
  }
  if (next < materialize.chunks) {
    await continueAsNew<typeof collectRolloutsWorkflow>({
      ...input,
      resume: { materialize, nextChunk: next, done, failed, startedAtMs },
    });
  }

  phase = 'merge';
  const merge = await mergeShards({ plan: input.plan, stage: input.stage, outPrefix: input.outPrefix });
  phase = 'profile';
  const profile = await profileStage({ outPrefix: input.outPrefix, allowPartialRollouts: settings.allowPartialRollouts });
  phase = 'done';
  return { materialize, merge, profile };
}
