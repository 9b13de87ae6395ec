// Everything the worker registers. Activities are the IO shell around gym/: one file per stage.
// What a worker process was started with (its base dir, artifacts root, secrets) is read once, here,
// and handed to the activities that need it, instead of each reading process.env on every call.
import { runChunk, runReusedChunks } from './chunk/chunk';
import { convertStage } from './run/convert';
import { finishStage } from './stage/finishStage';
import { prepareCurriculumRound, publishCurriculumRound, startCurriculum } from './pool/curriculum';
import { materializeStage } from './stage/materialize';
import { mergeChunks } from './stage/merge';
import { convertNewSources, prepareNightlyRun, publishNightlyVersion } from './pool/nightly';
import { prefetchSegment, removeEarlyProfiling } from './early/prefetch';
import { alignPending, alignPrefetched, withEarlySamples } from './early/prefetched';
import { publishSegmentSamples } from './early/segmentSamples';
import { prepareRun } from './run/prepare';
import { publishStage } from './run/publish';
import { workerSettingsFromEnv, type WorkerSettings } from './run/runContext';
import { ensureServers } from './run/servers';
import { runManagedServers, workerHostQueue } from './run/spawn';
import { stageAccounting } from './stage/rolloutAccounting';

export interface ActivityDeps {
  settings: WorkerSettings;
  /** Where API keys named by a config's `api_key_env` are looked up: the worker's environment. */
  secrets: NodeJS.ProcessEnv;
}

export function activityDepsFromEnv(env: NodeJS.ProcessEnv = process.env): ActivityDeps {
  return { settings: workerSettingsFromEnv(env), secrets: env };
}

export function createActivities(deps: ActivityDeps = activityDepsFromEnv()) {
  const { settings, secrets } = deps;
  return {
    prepareRun: (input: unknown, workflowId: string) => prepareRun(settings, input, workflowId),
    ensureServers,
    runManagedServers,
    workerHostQueue,
    materializeStage,
    runChunk: (input: Parameters<typeof runChunk>[1]) => runChunk(secrets, input, withEarlySamples),
    runReusedChunks: (input: Parameters<typeof runReusedChunks>[1]) =>
      runReusedChunks(secrets, input, withEarlySamples),
    mergeChunks,
    finishStage,
    stageAccounting,
    convertStage,
    prefetchSegment,
    publishSegmentSamples,
    removeEarlyProfiling,
    alignPrefetched,
    alignPending,
    publishStage,
    prepareNightlyRun: (args: Parameters<typeof prepareNightlyRun>[1]) => prepareNightlyRun(settings, args),
    convertNewSources,
    publishNightlyVersion,
    startCurriculum: (args: Parameters<typeof startCurriculum>[1]) => startCurriculum(settings, args),
    prepareCurriculumRound: (args: Parameters<typeof prepareCurriculumRound>[1]) =>
      prepareCurriculumRound(settings, args),
    publishCurriculumRound,
  };
}

/** The activity interface workflows proxy (`proxyActivities<PivotActivities>`). */
export type PivotActivities = ReturnType<typeof createActivities>;
