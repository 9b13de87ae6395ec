import type { PipelineConfig } from './config';
import type { RolloutAccounting } from '../gym/rolloutAccounting';

// Activity and child-workflow payloads: paths, counts and the (secret-free) config, never rows.

export interface RunPlan {
  runId: string;
  runDir: string;
  /** Directory config-relative paths are resolved against (the worker's working directory). */
  baseDir: string;
  config: PipelineConfig;
  /**
   * Where chunk attempts record when their requests were in flight, for the report's engine timeline;
   * unset (pool runs, runs begun before the timeline), nothing is recorded.
   */
  timelineDir?: string;
  /** Set on early local profiling's segments (`overlap: true`), whose work worker metrics count apart. */
  early?: boolean;
  /**
   * Set when a resume finds the run's local profile begun (its materialized inputs recorded): its
   * shards hold those keys already, so early profiling would only pay the engine for them again.
   */
  localProfileBegun?: boolean;
}

export type RolloutStage = 'collect' | 'local_profile';

export interface CollectStageInput {
  plan: RunPlan;
  /** Set by continue-as-new: what earlier runs of this workflow already did. */
  resume?: {
    materialize: MaterializeResult;
    nextChunk: number;
    done: number;
    failed: number;
    startedAtMs: number;
    merged?: MergeProgress;
  };
  /** History length after which the workflow continues as new (tests lower it to prove the bound). */
  continueAsNewAfterEvents?: number;
  stage: RolloutStage;
  /** Task rows to materialize (collect: the config's input JSONL; local_profile: candidates.jsonl). */
  inputPath: string;
  /** Output stem: `<outPrefix>.jsonl` holds rollouts, `<outPrefix>_materialized_inputs.jsonl` the inputs. */
  outPrefix: string;
  /** Workflow told (chunksFinishedSignal) as chunks finish, so local profiling can start early. */
  notifyWorkflowId?: string;
  /** Chunks ([from, to) ranges) whose every row early local profiling answered: run a run of them per activity. */
  reusedChunks?: Array<[number, number]>;
}

/** Input of the early local profiling that runs beside collect (`overlap: true`). */
export interface PrefetchInput {
  plan: RunPlan;
  /** Collect's output stem, whose finished chunks are read. */
  collectPrefix: string;
  /**
   * Early profiling also files its samples for the run's local profile, once the run signals its
   * candidates (runCandidatesSignal): the bulk while the last segments still profile.
   */
  alignForRun?: boolean;
  continueAsNewAfterEvents?: number;
  /** Set by continue-as-new. */
  resume?: PrefetchState;
}

export interface PrefetchCounts {
  /** Segments cut: runs of whole tasks whose collect chunks had all finished. */
  segments: number;
  /** Candidates those segments gave (cross-task duplicates are only found later, by the run's convert). */
  candidates: number;
  /** Local-profile samples completed early. */
  samples: number;
}

export interface PrefetchState {
  /** The first materialized collect row not cut into a segment yet. */
  fromRow: number;
  finishedChunks: number;
  collectDone: boolean;
  /** Directories of the segments profiled, in row order. */
  segments: string[];
  counts: PrefetchCounts;
  /**
   * The run's candidates, once signalled (runCandidatesSignal): state, so a continue-as-new while
   * segments still run cannot drop it and leave the filing waiting for a signal that came already.
   */
  runTarget?: { candidatesPath: string; outPrefix: string };
}

/** The early samples filed for the run's local-profile chunks (activities/early/prefetched.ts). */
export interface PrefetchAlignment {
  reused: number;
  rows: number;
  /** Chunks whose every row is answered by an early sample, as [from, to) ranges: no request among them. */
  wholeChunks: Array<[number, number]>;
}

export type PrefetchResult = PrefetchCounts & {
  /** Directories of the segments profiled, in row order. */
  segmentDirs: string[];
  /** With `alignForRun`: the samples filed for the run. */
  aligned?: PrefetchAlignment;
};

export interface PrefetchProgress extends PrefetchCounts {
  /** Segment workflows running now (query them with stageProgressQuery for live numbers). */
  running: string[];
  collectChunksFinished: number;
}

/** A cut of collect rows into a segment for early local profiling. */
export interface PrefetchSegment {
  /** First row after the segment: the next segment starts there. */
  toRow: number;
  /** Absent when the rows gave no candidate. */
  dir?: string;
  candidatesPath?: string;
  candidates: number;
}

export interface MaterializeResult {
  materializedInputsPath: string;
  rows: number;
  tasks: number;
  chunks: number;
}

/** Chunks one runReusedChunks activity runs at most: a bounded result, and a retry that redoes little. */
export const MAX_REUSED_CHUNKS = 64;

export interface ChunkInput {
  plan: RunPlan;
  stage: RolloutStage;
  outPrefix: string;
  chunkIndex: number;
  /**
   * When the collection time budget ends (epoch ms), fixed in workflow state at the stage's start:
   * after it, or within its drain margin, the chunk starts no rollout.
   */
  dispatchDeadlineMs?: number;
}

export interface ChunkResult {
  chunkIndex: number;
  completed: number;
  failed: number;
  alreadyDone: number;
  /** Rows the time budget did not let start: nothing of them is written, and a resume runs them. */
  drained?: number;
  /** Of `completed`, rows answered from early local profiling's samples, without a request. */
  reused: number;
}

/** How far the merged files have got while chunks still run: chunks [0, chunks) are in them, ending at these byte sizes. */
export interface MergeProgress {
  chunks: number;
  rolloutsBytes: number;
  failuresBytes: number;
  /** Absent in progress recorded before merges wrote digests. */
  digestsBytes?: number;
  completed: number;
  failedKeys: number;
  /**
   * The token of the merge attempt that wrote these bytes, whose partial files the next merge
   * continues; absent when nothing was merged (or in progress recorded before merges said so).
   */
  partial?: string;
}

export const NOTHING_MERGED: MergeProgress = {
  chunks: 0,
  rolloutsBytes: 0,
  failuresBytes: 0,
  digestsBytes: 0,
  completed: 0,
  failedKeys: 0,
};

export interface MergeResult {
  rolloutsPath: string;
  failuresPath: string;
  completed: number;
  failedKeys: number;
}

export interface ProfileResult {
  rewardProfilingPath: string;
  agentMetricsPath: string;
  tasks: number;
  /** Tasks whose rollouts all got reward 1 / all 0 / a mix; per-task view of the collect stage. */
  allPass: number;
  allFail: number;
  mixed: number;
}

export interface CollectStageResult {
  materialize: MaterializeResult;
  merge: MergeResult;
  profile: ProfileResult;
  /** Where every expected rollout went; absent in stages begun before stages accounted for them. */
  accounting?: RolloutAccounting;
}

/** An early-profiling segment's samples: a stage without its finish (workflows/earlySegment.ts). */
export type EarlySegmentResult = Pick<CollectStageResult, 'materialize' | 'merge'>;

export interface ConvertResult {
  candidatesPath: string;
  skippedPath: string;
  metricsPath: string;
  positiveTrajectories: number;
  decisionPoints: number;
  candidates: number;
  skipped: number;
  deduped: number;
}

export interface PublishResult {
  pivotsPath: string;
  gymConfigPath: string;
  selectionMetricsPath: string;
  reportPath: string;
  validatorExitCode: number;
  counts: Record<string, number>;
  /** `<runDir>/run_summary.json`. */
  runSummaryPath?: string;
}

export interface StageProgress {
  stage: string;
  done: number;
  total: number;
  failed: number;
  rolloutsPerSecond: number;
  etaSeconds: number | null;
  /** Once the stage is merged: where every expected rollout went. */
  accounting?: RolloutAccounting;
}

export interface PivotMiningProgress {
  runId: string;
  runDir: string;
  stage: string;
  /** The chunked child workflow running now (collect or local_profile); query it for live numbers. */
  childWorkflowId: string | null;
  /** The early local profiling running beside collect (`overlap: true`), until the run's own local profile starts. */
  prefetchWorkflowId?: string | null;
  counts: Record<string, number>;
  /** Per rollout stage done so far: expected, succeeded, failed by class, terminal, omitted. */
  accounting?: Record<string, RolloutAccounting>;
}

export interface PivotMiningResult {
  runId: string;
  runDir: string;
  pivotsPath: string;
  /** Exit code of the ported NeMo Gym validator on pivots.jsonl (0 = accepted). */
  validatorExitCode: number;
  gymConfigPath: string;
  reportPath: string;
  counts: Record<string, number>;
  /** Per rollout stage: expected, succeeded, failed by class, terminal, omitted (also in run_summary.json). */
  accounting?: Record<string, RolloutAccounting>;
  /** `<runDir>/run_summary.json`; absent for runs begun before it was written. */
  runSummaryPath?: string;
  /** With `overlap: true`: what was profiled early, and how many of the run's samples it answered. */
  prefetch?: PrefetchCounts & { reused: number };
}
