import { MockActivityEnvironment } from '@temporalio/testing';
import { runChunk } from '../../activities/chunk/chunk';
import { finishStage } from '../../activities/stage/finishStage';
import { materializeStage } from '../../activities/stage/materialize';
import { mergeChunks } from '../../activities/stage/merge';
import { stageSettings } from '../../contracts/stageSettings';
import { NOTHING_MERGED, type ChunkResult, type RunPlan } from '../../contracts/payloads';
import { MergeFrontier } from '../../workflows/mergeFrontier';

// The third side of the throughput bench (--without-temporal): the collect stage's own activities,
// in collectRolloutsWorkflow's order (materialize, a window of chunks with merges of the finished
// ones beside them, the finish), called in the bench process with no Temporal server and no worker.
// Set beside the bare loop and the durable stage, it tells what the stage's own work costs (its
// files, its serial activities) from what Temporal adds (workflow tasks, hand-offs, the server's
// and the worker's CPU beside the simulators).

export interface InProcessStageRun {
  completed: number;
  seconds: number;
  /** First chunk started -> last chunk finished, as the durable side's chunk span. */
  chunkSpanSeconds: number;
  /** Materialize and finish, the stage's serial activities. */
  serialSeconds: number;
}

/** One activity call outside Temporal: a fresh context each, as each activity attempt gets. */
const asActivity = <T>(fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment().run(fn);

const secondsBetween = (start: bigint, end: bigint) => Number(end - start) / 1e9;
const secondsSince = (start: bigint) => secondsBetween(start, process.hrtime.bigint());

export async function runStageInProcess(
  plan: RunPlan,
  inputPath: string,
  outPrefix: string,
): Promise<InProcessStageRun> {
  const stage = 'collect';
  const settings = stageSettings(plan, stage);
  const started = process.hrtime.bigint();
  const materialize = await asActivity(() => materializeStage({ plan, stage, inputPath, outPrefix }));
  const materializeSeconds = secondsSince(started);

  const spanStart = process.hrtime.bigint();
  const frontier = new MergeFrontier(NOTHING_MERGED, 0, (from, to) =>
    asActivity(() => mergeChunks({ outPrefix, from, to })),
  );
  let next = 0;
  let running = 0;
  // A lane per chunk slot, so a finished chunk is replaced at once, as the workflow's window does.
  const lane = async (): Promise<void> => {
    while (next < materialize.chunks) {
      const chunkIndex = next++;
      running++;
      const result: ChunkResult = await asActivity(() => runChunk(process.env, { plan, stage, outPrefix, chunkIndex }));
      running--;
      // As the workflow: the last chunk's merge is left to the finish.
      if (next >= materialize.chunks && running === 0) frontier.hold();
      frontier.chunkFinished(result.chunkIndex);
    }
  };
  await Promise.all(Array.from({ length: settings.maxChunksInFlight }, lane));
  const chunkSpanSeconds = secondsSince(spanStart);
  const merged = await frontier.drain();

  const finishStart = process.hrtime.bigint();
  const { merge } = await asActivity(() =>
    finishStage({ plan, stage, outPrefix, merged, allowPartialRollouts: settings.allowPartialRollouts }),
  );
  // One clock reading ends both the finish and the whole run, so the parts never sum past the total.
  const finished = process.hrtime.bigint();
  return {
    completed: merge.completed,
    seconds: secondsBetween(started, finished),
    chunkSpanSeconds,
    serialSeconds: materializeSeconds + secondsBetween(finishStart, finished),
  };
}
