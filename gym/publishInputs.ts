import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { readJsonl } from './jsonl';
import { DUPLICATE_REASON } from './convert/candidates';
import { agentRefSchema, expectedActionSchema, responsesCreateParamsSchema } from './schemas';
import { localProfileRowSchema, localProfileStats, type LocalProfileStats } from './selection';
import type { CandidateSummary, UpstreamCounts } from './selectionMetrics';
import { PublishInputError } from './errors';
import type { TrajectoryRef } from './validationSplit';

// Readers for what the publish stage consumes: candidates, the local reward profile, the skip audit
// and the convert metrics. Each names the file and line of the first bad row.

export const candidateRowSchema = z.looseObject({
  responses_create_params: responsesCreateParamsSchema,
  expected_action: expectedActionSchema,
  agent_ref: agentRefSchema.optional(),
  provenance: z.looseObject({
    uuid: z.string().min(1),
    depth: z.number().nullish(),
    source_reward: z.number().nullish(),
    source_file: z.string().optional(),
    task_index: z.number().int().nonnegative().optional(),
    rollout_index: z.number().int().nonnegative().optional(),
  }),
});

const skippedRowSchema = z.looseObject({ reason: z.string().min(1) });

const trajectoryRefSchema = z.looseObject({
  source_file: z.string(),
  task_index: z.number().int().nonnegative(),
  rollout_index: z.number().int().nonnegative(),
});
const duplicateRowSchema = z.looseObject({ duplicate_of: z.string().min(1), provenance: trajectoryRefSchema });

function parseRow<T extends z.ZodType>(schema: T, file: string, line: number, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new PublishInputError(file, line, `${issue.path.join('.') || '(row)'}: ${issue.message}`);
}

function trajectoryOf(provenance: z.infer<typeof candidateRowSchema>['provenance']): TrajectoryRef | undefined {
  const { source_file, task_index, rollout_index } = provenance;
  if (source_file === undefined || task_index === undefined || rollout_index === undefined) return undefined;
  return { source_file, task_index, rollout_index };
}

function toolNames(action: z.infer<typeof expectedActionSchema>): string[] {
  if (action.type === 'function_call') return [action.name];
  if (action.type === 'function_call_batch') return action.calls.map((c) => c.name);
  return [];
}

export async function readCandidateSummaries(file: string): Promise<CandidateSummary[]> {
  const summaries: CandidateSummary[] = [];
  for await (const { line, value } of readJsonl(file)) {
    const row = parseRow(candidateRowSchema, file, line, value);
    summaries.push({
      index: summaries.length,
      line,
      uuid: row.provenance.uuid,
      action_type: row.expected_action.type,
      tool_names: toolNames(row.expected_action),
      depth: row.provenance.depth ?? null,
      source_reward: row.provenance.source_reward ?? null,
      trajectory: trajectoryOf(row.provenance),
    });
  }
  return summaries;
}

export async function readLocalProfile(file: string, numCandidates: number): Promise<Map<number, LocalProfileStats>> {
  const profiles = new Map<number, LocalProfileStats>();
  for await (const { line, value } of readJsonl(file)) {
    const stats = localProfileStats(parseRow(localProfileRowSchema, file, line, value));
    if (stats.task_index >= numCandidates) {
      throw new PublishInputError(
        file,
        line,
        `_ng_task_index ${stats.task_index} has no candidate (the candidates file has ${numCandidates} rows); was it profiled from another candidates file?`,
      );
    }
    if (profiles.has(stats.task_index)) {
      throw new PublishInputError(file, line, `duplicate profile row for _ng_task_index ${stats.task_index}`);
    }
    profiles.set(stats.task_index, stats);
  }
  return profiles;
}

export async function readSkipReasons(file: string | undefined): Promise<Map<string, number>> {
  const reasons = new Map<string, number>();
  if (file === undefined) return reasons;
  for await (const { line, value } of readJsonl(file)) {
    const { reason } = parseRow(skippedRowSchema, file, line, value);
    // Duplicates are their own funnel stage (convert's `deduped`), not a skip reason.
    if (reason === DUPLICATE_REASON) continue;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  return reasons;
}

/** Trajectories convert found a kept pivot in again: each duplicate's trajectory and the kept pivot's uuid. */
export async function readDuplicateLinks(
  file: string | undefined,
): Promise<{ trajectory: TrajectoryRef; duplicateOf: string }[]> {
  const links: { trajectory: TrajectoryRef; duplicateOf: string }[] = [];
  if (file === undefined) return links;
  for await (const { line, value } of readJsonl(file)) {
    if ((value as { reason?: unknown }).reason !== DUPLICATE_REASON) continue;
    const row = parseRow(duplicateRowSchema, file, line, value);
    const { source_file, task_index, rollout_index } = row.provenance;
    links.push({ trajectory: { source_file, task_index, rollout_index }, duplicateOf: row.duplicate_of });
  }
  return links;
}

/** Upstream funnel stages from the convert stage's metrics, under whichever of these names it uses. */
const UPSTREAM_KEYS = {
  tasks: ['num_tasks', 'tasks'],
  rollouts: ['num_rollouts', 'rollouts'],
  positive_trajectories: ['num_positive_trajectories', 'positive_trajectories', 'num_positive_rollouts'],
  decision_points: ['decision_points'],
  deduped: ['deduped'],
} as const;

/** Counts the workflow passes in win over the convert metrics file, which may predate a resume. */
export async function readUpstreamCounts(
  file: string | undefined,
  funnel: Record<string, number>,
): Promise<UpstreamCounts> {
  const upstream: UpstreamCounts = {
    tasks: funnel.tasks ?? null,
    rollouts: funnel.rollouts ?? null,
    positive_trajectories: funnel.positive_trajectories ?? null,
    decision_points: funnel.decision_points ?? null,
    deduped: funnel.deduped ?? null,
  };
  if (file === undefined) return upstream;
  let metrics: unknown;
  try {
    metrics = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new PublishInputError(file, null, `cannot read convert metrics: ${(err as Error).message}`);
  }
  if (typeof metrics !== 'object' || metrics === null) return upstream;
  const record = metrics as Record<string, unknown>;
  for (const stage of Object.keys(UPSTREAM_KEYS) as (keyof typeof UPSTREAM_KEYS)[]) {
    const key = UPSTREAM_KEYS[stage].find((k) => typeof record[k] === 'number');
    if (key !== undefined && upstream[stage] === null) upstream[stage] = record[key] as number;
  }
  return upstream;
}
