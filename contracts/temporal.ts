import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PivotMiningProgress, PrefetchProgress, StageProgress } from './payloads';
import type { CurriculumRound, PolicyCheckpoint } from './poolPayloads';

// The Temporal surface every caller shares: the workflows register these handlers and the client
// (client/, the CLI, tests) calls them by the same typed definitions, never by name strings.

/** Task queue of the pivot-miner workers unless PIVOT_MINER_TASK_QUEUE says otherwise. */
export const DEFAULT_TASK_QUEUE = 'pivot-mining';

export const pivotMiningProgressQuery = defineQuery<PivotMiningProgress>('progress');
export const stageProgressQuery = defineQuery<StageProgress>('progress');
export const nightlyProgressQuery = defineQuery<{
  stage: string;
  versionId: string | null;
  childWorkflowId: string | null;
}>('progress');
export const prefetchProgressQuery = defineQuery<PrefetchProgress>('progress');
/** Collect → early local profiling: every chunk below `chunks` has finished; `final` once all have. */
export const chunksFinishedSignal = defineSignal<[{ chunks: number; final: boolean }]>('chunksFinished');
/** The run → early local profiling: the run's candidates, to file the early samples for. */
export const runCandidatesSignal = defineSignal<[{ candidatesPath: string; outPrefix: string }]>('runCandidates');
/** Early local profiling → the run: one more segment was profiled (the run's sign that it progresses). */
export const segmentProfiledSignal = defineSignal('segmentProfiled');
export const roundsQuery = defineQuery<CurriculumRound[]>('rounds');
/** The curriculum's current pool file, or null until its starting pool is fixed. */
export const curriculumPoolQuery = defineQuery<string | null>('pool');
/** An Update, not a Signal: the caller gets the round it triggered back (or its failure). */
export const policyCheckpointUpdate = defineUpdate<CurriculumRound, [PolicyCheckpoint]>('policyCheckpoint');
