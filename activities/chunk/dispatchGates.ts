import { stageSettings } from '../../contracts/stageSettings';
import type { ChunkInput } from '../../contracts/payloads';
import { DispatchLatencyTracker, dispatchGate, type DispatchGate } from '../../gym/dispatchBudget';

// The request times behind the adaptive drain margin are one stage's on this worker, shared by every
// chunk of it the worker runs: a chunk started late in the budget then has a margin from its first
// row, as 0.7.0's one tracker per collection gives. A resumed run has a deadline of its own, and so a
// tracker of its own. Only the last few stages' are kept.

const RECENT_STAGES = 8;
const trackers = new Map<string, DispatchLatencyTracker>();

function stageTracker(key: string): DispatchLatencyTracker {
  const tracker = trackers.get(key) ?? new DispatchLatencyTracker();
  trackers.delete(key);
  trackers.set(key, tracker);
  for (const oldest of trackers.keys()) {
    if (trackers.size <= RECENT_STAGES) break;
    trackers.delete(oldest);
  }
  return tracker;
}

/** The time budget a chunk's requests ask before they start; undefined when the stage has none. */
export function chunkDispatchGate(input: ChunkInput): DispatchGate | undefined {
  const deadlineMs = input.dispatchDeadlineMs;
  if (deadlineMs === undefined) return undefined;
  const { drainMarginS } = stageSettings(input.plan, input.stage);
  return dispatchGate(deadlineMs, drainMarginS, stageTracker(`${input.outPrefix}@${deadlineMs}`));
}
