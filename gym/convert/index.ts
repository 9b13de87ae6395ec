import path from 'node:path';
import { z } from 'zod';
import {
  type PivotCandidate,
  type SkipAuditRow,
  type TrajectorySource,
  decisionPointOutcomes,
  duplicateAudit,
  withKindedProvenance,
} from './candidates';
import { SKIP_REASONS } from './decisionPoints';
import { convertRow, detectSourceFormat, fitsFormat } from './detect';
import { describeValue, readJsonlRows } from './lineReader';
import { withoutRolloutObservations } from '../rolloutObservations';
import { jsonLine } from '../jsonl';
import { mkdirDurably, writeFileDurably } from '../durable';
import { ConvertInputError } from '../errors';
import { StagedJsonlFile } from '../stagedJsonl';
import {
  SOURCE_PREFERENCES,
  TaskRewardSpread,
  isCleanPositive,
  readRewardProfile,
  taskTier,
  tierCount,
} from './sourceSelection';
import { fieldMappingSchema } from './toolMessages';
import { type RowConversion, SOURCE_FORMATS, type SourceFormat } from './trajectory';

export { ConvertInputError } from '../errors';
export {
  DUPLICATE_REASON,
  pivotCandidateSchema,
  skipAuditRowSchema,
  type PivotCandidate,
  type SkipAuditRow,
} from './candidates';
export { SKIP_REASONS, type SkipReason } from './decisionPoints';

export const convertOptionsSchema = z
  .strictObject({
    agent_name: z.string().min(1),
    source_format: z.enum(['auto', ...SOURCE_FORMATS]).default('auto'),
    min_source_reward: z.number().finite().default(1.0),
    source_preference: z.enum(SOURCE_PREFERENCES).default('prefer_mixed'),
    batch_pivots: z.boolean().default(false),
    keep_reasoning: z.boolean().default(false),
    field_mapping: fieldMappingSchema.optional(),
  })
  .refine((o) => o.source_format !== 'tool_messages' || o.field_mapping !== undefined, {
    message: 'source_format tool_messages needs field_mapping (at least its messages path)',
    path: ['field_mapping'],
  });
export type ConvertOptions = z.input<typeof convertOptionsSchema>;
type ParsedOptions = z.infer<typeof convertOptionsSchema>;

export interface ConvertCounts {
  trajectories: number;
  positive_trajectories: number;
  /** Positive trajectories left out by `require_mixed`. */
  not_selected_trajectories: number;
  decision_points: number;
  candidates: number;
  /** Audit lines other than duplicates: rejected decision points and malformed rows. */
  skipped: number;
  /** Decision points identical to a kept candidate; each has a `duplicate` audit line naming it. */
  deduped: number;
  by_skip_reason: Record<string, number>;
  by_action_type: Record<string, number>;
}

export interface ConvertSummary {
  candidatesPath: string;
  skippedPath: string;
  metricsPath: string;
  counts: ConvertCounts;
}

export const CANDIDATES_FILE = 'candidates.jsonl';
export const SKIPPED_FILE = 'candidates_skipped.jsonl';
export const METRICS_FILE = 'candidates_metrics.json';

interface SourcedRow {
  source: TrajectorySource;
  conversion: RowConversion;
}

/**
 * Turns source trajectories into pivot candidates: one per decision point of each clean positive
 * trajectory, each rejected decision point audited with its reason, identical pivots kept once (the
 * others audited as duplicates of the kept one), so candidates and audit lines account for every
 * decision point.
 * Inputs are streamed (once to learn task reward spreads, then once per output tier), so memory
 * holds only pivot keys and kept uuids; output order is the input order within each tier, hence
 * deterministic.
 */
export async function convertToCandidates(
  opts: {
    inputs: string[];
    outDir: string;
    rewardProfilePath?: string;
    /** Provenance records source files relative to this directory, so a dataset does not depend on where a run lived. */
    sourceRoot?: string;
    /** The name provenance records for a source file, when it was written somewhere else first. */
    sourceName?: (file: string) => string;
  } & ConvertOptions,
): Promise<ConvertSummary> {
  const { inputs, outDir, rewardProfilePath, sourceRoot, sourceName, ...rest } = opts;
  const nameOf = sourceName ?? ((file: string) => (sourceRoot === undefined ? file : path.relative(sourceRoot, file)));
  const parsed = convertOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    throw new Error(
      `invalid convert options: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ')}`,
    );
  }
  const options = parsed.data;
  if (inputs.length === 0) throw new Error('convert needs at least one input file');

  const counts: ConvertCounts = {
    trajectories: 0,
    positive_trajectories: 0,
    not_selected_trajectories: 0,
    decision_points: 0,
    candidates: 0,
    skipped: 0,
    deduped: 0,
    by_skip_reason: Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])),
    by_action_type: { function_call: 0, message: 0, function_call_batch: 0 },
  };
  await mkdirDurably(outDir);
  const candidatesPath = path.join(outDir, CANDIDATES_FILE);
  const skippedPath = path.join(outDir, SKIPPED_FILE);
  const metricsPath = path.join(outDir, METRICS_FILE);
  const candidatesOut = new StagedJsonlFile(candidatesPath);
  const skippedOut = new StagedJsonlFile(skippedPath);

  try {
    const profile = rewardProfilePath === undefined ? undefined : await readRewardProfile(rewardProfilePath);
    const spread = new TaskRewardSpread();
    const formats: Record<string, SourceFormat> = {};
    const taskKey = (fileIndex: number, taskIndex: number) =>
      profile ? String(taskIndex) : `${fileIndex}:${taskIndex}`;
    const isMixed = (fileIndex: number, taskIndex: number) =>
      profile ? (profile.get(taskIndex) ?? false) : spread.isMixed(taskKey(fileIndex, taskIndex));

    for (const [fileIndex, file] of inputs.entries()) {
      for await (const { source, conversion } of sourcedRows(file, options, formats, nameOf(file))) {
        counts.trajectories += 1;
        if (!conversion.ok) {
          await skippedOut.writeLine(rowLine(rowRejectionAudit(source, conversion.detail)));
          counts.skipped += 1;
          counts.by_skip_reason.malformed_trajectory += 1;
          continue;
        }
        spread.add(taskKey(fileIndex, source.taskIndex), conversion.trajectory.reward);
        if (isCleanPositive(conversion.trajectory, options.min_source_reward)) counts.positive_trajectories += 1;
      }
    }

    const keptUuids = new Map<string, string>();
    for (let tier = 0; tier < tierCount(options.source_preference); tier += 1) {
      for (const [fileIndex, file] of inputs.entries()) {
        for await (const { source, conversion } of sourcedRows(file, options, formats, nameOf(file))) {
          if (!conversion.ok || !isCleanPositive(conversion.trajectory, options.min_source_reward)) continue;
          const taskTierIndex = taskTier(options.source_preference, isMixed(fileIndex, source.taskIndex));
          if (taskTierIndex === null) counts.not_selected_trajectories += 1;
          if (taskTierIndex !== tier) continue;
          const outcomes = decisionPointOutcomes(conversion.trajectory, source, {
            agentName: options.agent_name,
            keepReasoning: options.keep_reasoning,
            batchPivots: options.batch_pivots,
          });
          for (const outcome of outcomes) {
            counts.decision_points += 1;
            if (!outcome.ok) {
              await skippedOut.writeLine(rowLine(outcome.audit));
              counts.skipped += 1;
              counts.by_skip_reason[outcome.reason] += 1;
              continue;
            }
            const keptUuid = keptUuids.get(outcome.dedupeKey);
            if (keptUuid !== undefined) {
              await skippedOut.writeLine(rowLine(duplicateAudit(outcome.candidate, keptUuid)));
              counts.deduped += 1;
            } else {
              keptUuids.set(outcome.dedupeKey, outcome.candidate.provenance.uuid);
              await candidatesOut.writeLine(rowLine(outcome.candidate));
              counts.candidates += 1;
              counts.by_action_type[outcome.candidate.expected_action.type] += 1;
            }
          }
        }
      }
    }

    await candidatesOut.commit();
    await skippedOut.commit();
    const metrics = {
      ...counts,
      source_formats: formats,
      options: { ...options, reward_profile: rewardProfilePath ?? null },
    };
    await writeFileDurably(metricsPath, `${JSON.stringify(metrics, null, 2)}\n`);
  } finally {
    await candidatesOut.abort();
    await skippedOut.abort();
  }
  return { candidatesPath, skippedPath, metricsPath, counts };
}

/**
 * The rows of one input file with their source position and task/rollout keys. Keys a row does not
 * carry (`_ng_task_index`/`task_idx`, `_ng_rollout_index`) default to row order and to order within
 * the task, which is stable across the passes over the file.
 */
async function* sourcedRows(
  file: string,
  options: ParsedOptions,
  formats: Record<string, SourceFormat>,
  sourceFile: string,
): AsyncGenerator<SourcedRow> {
  let format: SourceFormat | undefined = formats[file];
  let rowOrder = 0;
  const rolloutsPerTask = new Map<number, number>();
  for await (const { line, row: raw } of readJsonlRows(file)) {
    // Observability fields of later NeMo Gym agents say how a rollout ran, not what it did.
    const row = withoutRolloutObservations(raw);
    if (format === undefined) {
      if (options.source_format === 'auto') {
        format = detectSourceFormat(row, file, line, options.field_mapping);
      } else if (!fitsFormat(options.source_format, row, options.field_mapping)) {
        throw new ConvertInputError(
          file,
          line,
          `source_format is ${options.source_format} but this row does not have that shape (saw ${describeValue(row)})`,
        );
      } else {
        format = options.source_format;
      }
      formats[file] = format;
    }
    const conversion = convertRow(format, row, `${path.basename(file)}:${line}`, options.field_mapping);
    const taskIndex = (conversion.ok ? conversion.trajectory.taskIndex : undefined) ?? rowOrder;
    rowOrder += 1;
    const nextRollout = rolloutsPerTask.get(taskIndex) ?? 0;
    rolloutsPerTask.set(taskIndex, nextRollout + 1);
    const rolloutIndex = (conversion.ok ? conversion.trajectory.rolloutIndex : undefined) ?? nextRollout;
    yield { source: { sourceFile, sourceLine: line, sourceFormat: format, taskIndex, rolloutIndex }, conversion };
  }
  if (format === undefined) throw new ConvertInputError(file, null, 'no rows (the file is empty or blank)');
}

function rowRejectionAudit(source: TrajectorySource, detail: string): SkipAuditRow {
  return {
    reason: 'malformed_trajectory',
    detail,
    provenance: {
      source_file: source.sourceFile,
      source_line: source.sourceLine,
      source_format: source.sourceFormat,
      task_index: source.taskIndex,
      rollout_index: source.rolloutIndex,
      source_reward: null,
    },
  };
}

/** A candidate or audit row as its JSONL line. */
const rowLine = (row: PivotCandidate | SkipAuditRow): string => jsonLine(withKindedProvenance(row));
