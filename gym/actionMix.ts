import { z } from 'zod';
import type { ExpectedAction } from './schemas';
import { compareKeepPriority, type PivotSelection, type SelectionCandidate } from './selection';

// NeMo RL's PivotRL recipe downsamples pivots whose expected action is a plain message, so that
// tool-call states dominate training. `max_share` caps the share of each expected-action kind among
// the published pivots, dropping the easiest pivots of an over-represented kind first.

export const ACTION_KINDS = ['message', 'function_call', 'function_call_batch'] as const;
export type ActionKind = ExpectedAction['type'];

const shareSchema = z.number().min(0).max(1);
export const maxShareSchema = z.strictObject({
  message: shareSchema.optional().describe('Largest share of pivots whose expected action is a plain message'),
  function_call: shareSchema.optional().describe('Largest share of pivots whose expected action is one tool call'),
  function_call_batch: shareSchema
    .optional()
    .describe('Largest share of pivots whose expected action is several tool calls at once'),
});
export type MaxShare = z.infer<typeof maxShareSchema>;

export interface MixCandidate extends SelectionCandidate {
  action_type: ActionKind;
}

/** Share × total may round just below a whole count (0.29 × 100 is 28.999999999999996). */
const EPSILON = 1e-9;

/** Published (`mixed`) pivots per expected-action kind, every kind present. */
export function actionMix(selections: readonly PivotSelection<MixCandidate>[]): Record<ActionKind, number> {
  const mix = { message: 0, function_call: 0, function_call_batch: 0 };
  for (const s of selections) if (s.outcome === 'mixed') mix[s.candidate.action_type] += 1;
  return mix;
}

/**
 * Marks `over_share` the fewest published pivots that bring every capped kind within its share:
 * one at a time, the easiest pivot of the kind furthest over its cap (dropping shrinks the total,
 * so caps are checked again after each). Depends only on pass rates and uuids, not on input order.
 */
export function limitActionMix<C extends MixCandidate>(selections: readonly PivotSelection<C>[], maxShare: MaxShare) {
  const capped = ACTION_KINDS.filter((kind) => maxShare[kind] !== undefined);
  if (capped.length === 0) return;
  const published = selections.filter((s) => s.outcome === 'mixed');
  const byKind = new Map(
    ACTION_KINDS.map((kind) => [
      kind,
      published.filter((s) => s.candidate.action_type === kind).sort(compareKeepPriority),
    ]),
  );
  let total = published.length;
  for (;;) {
    let furthest: ActionKind | undefined;
    let furthestExcess = EPSILON;
    for (const kind of capped) {
      const excess = byKind.get(kind)!.length - maxShare[kind]! * total;
      if (excess > furthestExcess) [furthest, furthestExcess] = [kind, excess];
    }
    if (furthest === undefined) return;
    byKind.get(furthest)!.pop()!.outcome = 'over_share';
    total -= 1;
  }
}
