import assert from 'node:assert/strict';
import { test } from 'node:test';
import { histogramTotals, meanBetween, stepBreakdown } from '../../../scripts/bench/stepBreakdown';
import type { RunRecord } from '../../../scripts/bench/timeline';

// Hand-built runs and exporter text with known numbers, so each figure is checked against
// arithmetic done here.

function run(firstMs: number, tasks: [number, number, number][], activities: [number, number, number][]): RunRecord {
  const lastMs = Math.max(...tasks.map((t) => t[2]), ...activities.map((a) => a[2]));
  return {
    events: 0,
    firstMs,
    lastMs,
    startsWorkflow: true,
    completesWorkflow: true,
    workflowTasks: tasks.map(([scheduled, started, completed]) => ({ scheduled, started, completed })),
    activities: activities.map(([scheduled, started, completed]) => ({ name: 'noop', scheduled, started, completed })),
  };
}

test('a step is the run over its activities; hand-offs are means over every task and activity', () => {
  // Run 1: start at 0, task 0-2-10, eager activity 10-10-16, task 16-20-30, activity 30-30-34, task 34-40-50.
  const first = run(0, [[0, 2, 10], [16, 20, 30], [34, 40, 50]], [[10, 10, 16], [30, 30, 34]]);
  // Run 2: one activity dispatched through the queue (scheduled 105, started 108).
  const second = run(100, [[100, 104, 105], [120, 121, 130]], [[105, 108, 120]]);
  const b = stepBreakdown([first, second]);
  assert.equal(b.stepMs, (50 / 2 + 30 / 1) / 2);
  assert.equal(b.workflowTaskDispatchMs, (2 + 4 + 6 + 4 + 1) / 5);
  assert.equal(b.workflowTaskOnWorkerMs, (8 + 10 + 10 + 1 + 9) / 5);
  assert.equal(b.activityDispatchMs, (0 + 0 + 3) / 3);
  assert.equal(b.activityRunMs, (6 + 4 + 12) / 3);
});

test('runs without activities are refused rather than read as free steps', () => {
  assert.throws(() => stepBreakdown([run(0, [[0, 1, 2]], [])]), /awaited no activity/);
});

const exporterText = [
  '# HELP temporal_request_latency Latency of client calls',
  '# TYPE temporal_request_latency histogram',
  'temporal_request_latency_bucket{namespace="default",operation="RespondWorkflowTaskCompleted",le="10"} 3',
  'temporal_request_latency_sum{namespace="default",operation="RespondWorkflowTaskCompleted",task_queue="a"} 30',
  'temporal_request_latency_count{namespace="default",operation="RespondWorkflowTaskCompleted",task_queue="a"} 4',
  'temporal_request_latency_sum{namespace="default",operation="RespondWorkflowTaskCompleted",task_queue="b"} 10',
  'temporal_request_latency_count{namespace="default",operation="RespondWorkflowTaskCompleted",task_queue="b"} 1',
  'temporal_request_latency_sum{namespace="default",operation="RespondActivityTaskCompleted"} 7',
  'temporal_request_latency_count{namespace="default",operation="RespondActivityTaskCompleted"} 2',
  'temporal_workflow_task_execution_latency_sum 12',
  'temporal_workflow_task_execution_latency_count 3',
].join('\n');

test('histogram totals add up the series whose labels match, and nothing else', () => {
  assert.deepEqual(histogramTotals(exporterText, 'temporal_request_latency', { operation: 'RespondWorkflowTaskCompleted' }), { sum: 40, count: 5 });
  assert.deepEqual(histogramTotals(exporterText, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }), { sum: 7, count: 2 });
  assert.deepEqual(histogramTotals(exporterText, 'temporal_request_latency'), { sum: 47, count: 7 });
  assert.deepEqual(histogramTotals(exporterText, 'temporal_workflow_task_execution_latency'), { sum: 12, count: 3 });
  assert.deepEqual(histogramTotals(exporterText, 'temporal_request_latency', { operation: 'PollWorkflowTaskQueue' }), { sum: 0, count: 0 });
});

test('the mean between two scrapes counts only what was recorded in between', () => {
  assert.equal(meanBetween({ sum: 40, count: 5 }, { sum: 100, count: 11 }), 10);
  assert.equal(meanBetween({ sum: 40, count: 5 }, { sum: 40, count: 5 }), undefined);
});
