import path from 'node:path';
import { z } from 'zod';
import { withPythonFloats } from '../kindedJson';
import { agentRefSchema, expectedActionSchema } from '../schemas';
import { type SkipReason, type Turn, assistantTurns, callIdMismatch, readAction } from './decisionPoints';
import { pivotKey } from '../pivotIdentity';
import { type Item, digest, withoutNullFields } from './items';
import { functionToolNames } from './tools';
import type { SourceFormat, Trajectory } from './trajectory';

/** Where a pivot came from. Skip-audit lines carry the same fields except `uuid`. */
export const pivotProvenanceSchema = z.looseObject({
  source_file: z.string(),
  source_line: z.number().int().positive(),
  source_format: z.string(),
  task_index: z.number().int().nonnegative(),
  rollout_index: z.number().int().nonnegative(),
  source_reward: z.number().nullable(),
  /** Index of the decision point among the source trajectory's decision points. */
  pivot_index: z.number().int().nonnegative(),
  /** Assistant turns before the pivot, including turns already in the task's input. */
  depth: z.number().int().nonnegative(),
  /** Decision points of the source trajectory. */
  trajectory_length: z.number().int().positive(),
  uuid: z.string().uuid(),
  source_trace: z.record(z.string(), z.unknown()).optional(),
});
export type PivotProvenance = z.infer<typeof pivotProvenanceSchema>;

/** The source rollout's reward is a Python float (`BaseVerifyResponse.reward: float`), written `1.0`
 * as NeMo Gym writes it even when the source file had `1`. (A published `local_pass_rate` needs no
 * such care: only mixed pivots are published, so it is never integral.) */
const PROVENANCE_FLOATS = ['source_reward'];

/** A candidate, audit or pivot row with its provenance kinded for jsonLine. */
export function withKindedProvenance<T extends { provenance: Record<string, unknown> }>(
  row: T,
): Record<string, unknown> {
  return { ...row, provenance: withPythonFloats(row.provenance, PROVENANCE_FLOATS) };
}

/** One line of candidates.jsonl: a pivot row (single_step_tool_use_with_argument_comparison) plus provenance. */
export const pivotCandidateSchema = z.looseObject({
  responses_create_params: z.looseObject({
    input: z.array(z.looseObject({})).min(1),
    tools: z.array(z.looseObject({})),
    tool_choice: z.literal('auto'),
    parallel_tool_calls: z.boolean(),
  }),
  expected_action: expectedActionSchema,
  agent_ref: agentRefSchema.extend({ type: z.literal('responses_api_agents') }),
  provenance: pivotProvenanceSchema,
});
export type PivotCandidate = z.infer<typeof pivotCandidateSchema>;

/** Audit reason of a decision point whose pivot (state and expected action) was already kept. */
export const DUPLICATE_REASON = 'duplicate';

/**
 * One line of the skip audit: a decision point (or a whole row) that gave no candidate. With the
 * candidates it accounts for every decision point of the converted trajectories.
 */
export const skipAuditRowSchema = z.object({
  reason: z.string(),
  detail: z.string(),
  provenance: pivotProvenanceSchema
    .omit({ uuid: true })
    .partial({ pivot_index: true, depth: true, trajectory_length: true }),
  /** On `duplicate` lines: the uuid of the kept candidate this decision point is identical to. */
  duplicate_of: z.string().uuid().optional(),
});
export type SkipAuditRow = z.infer<typeof skipAuditRowSchema>;

/** The audit line of a candidate dropped because `keptUuid` has the same pivot identity. */
export function duplicateAudit(candidate: PivotCandidate, keptUuid: string): SkipAuditRow {
  const { uuid: _ownUuid, source_trace: _trace, ...provenance } = candidate.provenance;
  return {
    reason: DUPLICATE_REASON,
    detail: `same state and expected action as kept pivot ${keptUuid}`,
    provenance,
    duplicate_of: keptUuid,
  };
}

export interface TrajectorySource {
  sourceFile: string;
  sourceLine: number;
  sourceFormat: SourceFormat;
  taskIndex: number;
  rolloutIndex: number;
}

export interface PivotOptions {
  agentName: string;
  keepReasoning: boolean;
  batchPivots: boolean;
}

export type DecisionPointOutcome =
  { ok: true; candidate: PivotCandidate; dedupeKey: string } | { ok: false; reason: SkipReason; audit: SkipAuditRow };

/**
 * One outcome per decision point of the trajectory's output, in order: a candidate whose input is
 * exactly the items before the pivot turn, or the reason it cannot be a pivot.
 */
export function decisionPointOutcomes(
  trajectory: Trajectory,
  source: TrajectorySource,
  opts: PivotOptions,
): DecisionPointOutcome[] {
  const items = [...trajectory.prefix, ...trajectory.output];
  const offset = trajectory.prefix.length;
  const turns = [
    ...assistantTurns(trajectory.prefix),
    ...assistantTurns(trajectory.output).map((t) => shiftTurn(t, offset)),
  ];
  const pivots = turns.filter((t) => t.start >= offset && t.actions.length > 0);
  const tools = trajectory.tools.map(withoutNullFields);
  const toolNames = functionToolNames(tools);

  return pivots.map((turn, pivotIndex) => {
    const depth = turns.filter((t) => t.actions.length > 0 && t.start < turn.start).length;
    const base = {
      source_file: source.sourceFile,
      source_line: source.sourceLine,
      source_format: source.sourceFormat,
      task_index: source.taskIndex,
      rollout_index: source.rolloutIndex,
      source_reward: trajectory.reward,
      pivot_index: pivotIndex,
      depth,
      trajectory_length: pivots.length,
    };
    const skip = (reason: SkipReason, detail: string): DecisionPointOutcome => ({
      ok: false,
      reason,
      audit: { reason, detail, provenance: base },
    });

    const reading = readAction(items, turn, toolNames, opts.batchPivots);
    if (!reading.ok) return skip(reading.reason, reading.detail);
    const input = inputPrefix(items, turns, turn.start, opts.keepReasoning);
    if (input.length === 0) return skip('empty_input', 'nothing precedes the first assistant turn');
    const mismatch = callIdMismatch(input);
    if (mismatch !== undefined) return skip('unmatched_call_id', mismatch);

    const action = reading.action;
    const params = {
      ...(trajectory.instructions !== undefined ? { instructions: trajectory.instructions } : {}),
      input,
      tools,
      tool_choice: 'auto' as const,
      parallel_tool_calls: action.type === 'function_call_batch',
    };
    const dedupeKey = pivotKey({ responses_create_params: params, expected_action: action });
    const uuid = uuidFromHex(
      digest('pivot', path.basename(source.sourceFile), String(source.sourceLine), String(pivotIndex), dedupeKey),
    );
    const candidate: PivotCandidate = {
      responses_create_params: params,
      expected_action: action,
      agent_ref: { type: 'responses_api_agents', name: opts.agentName },
      provenance: { ...base, uuid, ...(trajectory.sourceTrace ? { source_trace: trajectory.sourceTrace } : {}) },
    };
    return { ok: true, candidate, dedupeKey };
  });
}

function shiftTurn(turn: Turn, offset: number): Turn {
  return {
    start: turn.start + offset,
    end: turn.end + offset,
    actions: turn.actions.map((i) => i + offset),
    reasoning: turn.reasoning.map((i) => i + offset),
  };
}

/**
 * The items before `upTo`, without null fields. Reasoning is dropped unless the target accepts it;
 * when kept, each turn's reasoning is placed before its actions, where a model emits it (some
 * traces log it after the call it motivated, and the chat form cannot tell the two apart).
 */
function inputPrefix(items: Item[], turns: Turn[], upTo: number, keepReasoning: boolean): Item[] {
  const order: number[] = [];
  const turnAt = new Map(turns.map((t) => [t.start, t]));
  for (let index = 0; index < upTo;) {
    const turn = turnAt.get(index);
    if (turn === undefined) {
      order.push(index);
      index += 1;
      continue;
    }
    order.push(...(keepReasoning ? turn.reasoning : []), ...turn.actions);
    index = turn.end;
  }
  return order.map((i) => withoutNullFields(items[i]));
}

/** A UUID (version 5 layout) from a hex digest, so the same pivot always gets the same id. */
function uuidFromHex(hex: string): string {
  const h = hex.slice(0, 32).split('');
  h[12] = '5';
  h[16] = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}
