import type { ConvertResult, RunPlan } from './payloads';

// Payloads of the nightly-mining and curriculum workflows: paths, counts and summaries, never rows.

export interface NewSource {
  path: string;
  absPath: string;
  size: number;
  mtimeMs: number;
  sha256: string;
}

export interface NightlyPlan {
  plan: RunPlan;
  poolDir: string;
  versionId: string;
  previousVersion: string | null;
  matchedSources: number;
  newSources: NewSource[];
}

export interface NightlyConvertResult extends ConvertResult {
  /** Candidates dropped because the pool already holds the same pivot. */
  duplicatesOfPool: number;
}

export interface PoolVersionResult {
  versionId: string;
  versionDir: string;
  pivotsPath: string;
  gymConfigPath: string;
  reportPath: string;
  counts: Record<string, number>;
}

export interface NightlyMiningResult {
  status: 'published' | 'up_to_date';
  message: string;
  poolDir: string;
  /** The version `latest` points at after this run (null when the pool has never published). */
  versionId: string | null;
  pivotsPath: string | null;
  sources: string[];
  counts: Record<string, number>;
}

export interface PolicyCheckpoint {
  model: string;
  endpoint?: string;
  training_step?: number;
}

export interface CurriculumRound {
  round: number;
  model: string;
  trainingStep: number | null;
  /** Pivots profiled this round (the pool before retirement, after any top-up). */
  poolSize: number;
  toppedUp: number;
  kept: number;
  retiredLearned: number;
  retiredUnsolvable: number;
  /** Other outcomes that leave the pool (incomplete profiles, over the max_pivots budget). */
  dropped: number;
  meanPassRate: number;
  versionId: string;
  pivotsPath: string;
}

export interface CurriculumState {
  curriculumDir: string;
  poolPath: string;
  rounds: CurriculumRound[];
}

export interface CurriculumRoundPlan {
  plan: RunPlan;
  roundDir: string;
  candidatesPath: string;
  poolSize: number;
  toppedUp: number;
}
