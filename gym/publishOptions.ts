import { z } from 'zod';
import { maxShareSchema } from './actionMix';
import type { RolloutAccounting } from './rolloutAccounting';
import { stageHealthSchema } from './health/stageHealth';
import type { PublishCounts } from './selectionMetrics';
import type { Split } from './validationSplit';

// What publishing a pivot dataset takes (checked at the boundary) and what it returns.

const nameSchema = z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be a plain name (letters, digits, . _ -)');

export const publishOptionsSchema = z.strictObject({
  candidatesPath: z.string().min(1),
  localProfilePath: z.string().min(1),
  skippedPath: z.string().min(1).optional(),
  convertMetricsPath: z.string().min(1).optional(),
  outDir: z.string().min(1),
  agentName: nameSchema,
  resourcesServerName: nameSchema.optional(),
  modelServerName: z.string().min(1).optional(),
  comparatorConfig: z.record(z.string(), z.unknown()).optional(),
  maxPivots: z.number().int().nonnegative().optional(),
  allowPartial: z.boolean().optional(),
  maxPassRate: z.number().gt(0).lte(1).optional(),
  maxShare: maxShareSchema.optional(),
  /** Expected share of source trajectories published as validation; 0 or absent: train only. */
  validationFraction: z.number().min(0).max(0.5).optional(),
  validationSeed: z.number().int().default(0),
  datasetName: nameSchema.default('pivots'),
  /** Written into the Gym config; defaults to the absolute path of pivots.jsonl so it loads from any cwd. */
  jsonlFpath: z.string().min(1).optional(),
  simulatorLabel: z.string().min(1).optional(),
  /** The real model that was profiled, named in the report (ignored when simulatorLabel is set). */
  policy: z
    .strictObject({
      model: z.string().min(1),
      api: z.enum(['responses', 'chat_completions']),
      sourceRolloutsSimulated: z.boolean(),
    })
    .optional(),
  /** Stage counts known to the caller (`tasks`, `rollouts`, `positive_trajectories`, ...). */
  funnel: z.record(z.string(), z.number()).optional(),
  /** Where each rollout stage's expected rollouts went (gym/rolloutAccounting.ts), shown in the report. */
  accounting: z
    .record(
      z.string(),
      z.custom<RolloutAccounting>((v) => typeof v === 'object' && v !== null),
    )
    .optional(),
  /** What NeMo Gym 0.7.0's health checks found in each rollout stage, shown in the report. */
  health: z.record(z.string(), stageHealthSchema).optional(),
  /** The run's engine timeline drawing, relative to the dataset directory; the report links it. */
  engineTimelineSrc: z.string().min(1).optional(),
});
export type PublishOptions = z.input<typeof publishOptionsSchema>;
export type ParsedPublishOptions = z.output<typeof publishOptionsSchema>;

export interface PublishResult {
  pivotsPath: string;
  /** Set when a validation split was asked for. */
  validationPivotsPath?: string;
  gymConfigPath: string;
  selectionMetricsPath: string;
  datasetMetricsPath: string;
  reportPath: string;
  /** `published_partial`: published pivots with fewer local samples than asked for (allow_partial only). */
  counts: PublishCounts & { published_partial: number };
  /** Published pivots per side of the split (train only without one). */
  publishedBySplit: Partial<Record<Split, number>>;
}
