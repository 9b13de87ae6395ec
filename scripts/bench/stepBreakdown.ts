import { mean, type RunRecord } from './timeline';

// What one step of a workflow costs on a Temporal server: a workflow that awaits one activity after
// another hands off twice a step (activity completed -> workflow task -> next activity), and every
// hand-off is a workflow task the server dispatches, the worker runs and the server records. Read
// from the server's event times, and beside them from the SDK's own request metrics, which tell
// the server's share of a workflow task (its RespondWorkflowTaskCompleted call) from the worker's.

export interface StepBreakdown {
  /** Workflow start -> completion over activities awaited: the whole cost of one step. */
  stepMs: number;
  /** A workflow task's wait between scheduled and taken by the worker (the server's dispatch). */
  workflowTaskDispatchMs: number;
  /** Taken -> completed: the worker's activation plus the server's handling of its answer. */
  workflowTaskOnWorkerMs: number;
  /** Scheduled -> started of an activity (0 when the server hands it over eagerly). */
  activityDispatchMs: number;
  /** Started -> completed of an activity that does nothing: the hand-over and its completion call. */
  activityRunMs: number;
}

/** Means over the runs of a workflow awaiting one activity at a time; each run counts its steps. */
export function stepBreakdown(runs: readonly RunRecord[]): StepBreakdown {
  const activities = runs.flatMap((r) => r.activities);
  const tasks = runs.flatMap((r) => r.workflowTasks);
  if (activities.length === 0) throw new Error('the runs awaited no activity');
  const steps = runs.map((r) => (r.lastMs - r.firstMs) / Math.max(1, r.activities.length));
  return {
    stepMs: mean(steps),
    workflowTaskDispatchMs: mean(tasks.map((t) => t.started - t.scheduled)),
    workflowTaskOnWorkerMs: mean(tasks.map((t) => t.completed - t.started)),
    activityDispatchMs: mean(activities.map((a) => a.started - a.scheduled)),
    activityRunMs: mean(activities.map((a) => a.completed - a.started)),
  };
}

/** The `_sum` and `_count` of a Prometheus histogram in the SDK exporter's text, added up over every
 * series of `metric` whose labels include all of `labels`. */
export interface HistogramTotals {
  sum: number;
  count: number;
}

export function histogramTotals(text: string, metric: string, labels: Record<string, string> = {}): HistogramTotals {
  const totals = { sum: 0, count: 0 };
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || (match[1] !== `${metric}_sum` && match[1] !== `${metric}_count`)) continue;
    const seriesLabels = (match[2] ?? '').split(',');
    if (!wanted.every((label) => seriesLabels.includes(label))) continue;
    if (match[1].endsWith('_sum')) totals.sum += Number(match[3]);
    else totals.count += Number(match[3]);
  }
  return totals;
}

/** The mean of what was recorded between two scrapes, undefined when nothing was. */
export function meanBetween(before: HistogramTotals, after: HistogramTotals): number | undefined {
  const count = after.count - before.count;
  return count === 0 ? undefined : (after.sum - before.sum) / count;
}
