// NeMo Gym 0.7.0's collection time budget (`dispatch_budget_s`, `drain_margin_s`): whether a rollout
// may still start, decided when it would start (0.7.0 decides after taking a concurrency slot), from
// the time left and a margin that is either configured or this stage's own p75 request time.

/** Finished requests before the p75 is trusted as a margin, as 0.7.0's DispatchLatencyTracker. */
const MIN_DURATIONS_FOR_MARGIN = 5;

/** The request times of a stage, kept sorted: the margin reads a quantile before every start. */
export class DispatchLatencyTracker {
  private readonly durations: number[] = [];

  /** One finished request's seconds; 0.7.0 keeps only positive ones. */
  record(seconds: number): void {
    if (!(seconds > 0)) return;
    let at = this.durations.length;
    while (at > 0 && this.durations[at - 1]! > seconds) at--;
    this.durations.splice(at, 0, seconds);
  }

  /** Linear interpolation between the two nearest ranks, as 0.7.0's `quantile`. */
  quantile(q: number): number | undefined {
    const sorted = this.durations;
    if (sorted.length === 0) return undefined;
    const pos = (sorted.length - 1) * q;
    const low = Math.floor(pos);
    const high = Math.min(low + 1, sorted.length - 1);
    return sorted[low]! * (1 - (pos - low)) + sorted[high]! * (pos - low);
  }

  /** Seconds a rollout needs left to be worth starting: the configured margin wins, else the p75 once known. */
  drainMargin(configuredS: number | undefined): number | undefined {
    if (configuredS !== undefined) return configuredS;
    if (this.durations.length < MIN_DURATIONS_FOR_MARGIN) return undefined;
    return this.quantile(0.75);
  }
}

/**
 * True when a rollout must not start: the budget is spent (0 s is a budget already spent), or less
 * of it is left than the margin.
 */
export function drains(remainingS: number, marginS: number | undefined): boolean {
  return remainingS <= 0 || (marginS !== undefined && remainingS < marginS);
}

/** The gate an executor asks before each request, and tells each finished request's time. */
export interface DispatchGate {
  mayStart(): boolean;
  record(seconds: number): void;
}

/** The gate of a budget that ends at `deadlineMs` (epoch ms), read against `now`. */
export function dispatchGate(
  deadlineMs: number,
  configuredMarginS: number | undefined,
  tracker: DispatchLatencyTracker,
  now: () => number = Date.now,
): DispatchGate {
  return {
    mayStart: () => !drains((deadlineMs - now()) / 1000, tracker.drainMargin(configuredMarginS)),
    record: (seconds) => tracker.record(seconds),
  };
}
