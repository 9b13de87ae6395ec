import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DispatchLatencyTracker, dispatchGate, drains } from '../../gym/dispatchBudget';

// NeMo Gym 0.7.0's drain decision (rollout_collection.py, DispatchLatencyTracker.drain_margin and the
// check in _run_examples_with_metadata), case by case.

test('a rollout drains once the budget is spent, and 0 s is a budget already spent', () => {
  assert.equal(drains(0, undefined), true);
  assert.equal(drains(-3, undefined), true);
  assert.equal(drains(0.001, undefined), false);
});

test('a rollout drains when less of the budget is left than the margin, not when exactly the margin is', () => {
  assert.equal(drains(9.9, 10), true);
  assert.equal(drains(10, 10), false);
  assert.equal(drains(10.1, 10), false);
  assert.equal(drains(5, 0), false);
});

test('a configured margin wins; without one the p75 counts only after 5 finished requests', () => {
  const tracker = new DispatchLatencyTracker();
  for (const s of [4, 1, 3, 2]) tracker.record(s);
  assert.equal(tracker.drainMargin(undefined), undefined);
  assert.equal(tracker.drainMargin(7), 7);
  tracker.record(5);
  // Sorted 1..5: the p75 sits at rank 3 of 0..4, exactly 4; 0.7.0 interpolates between ranks.
  assert.equal(tracker.drainMargin(undefined), 4);
  tracker.record(6);
  assert.equal(tracker.quantile(0.75), 4.75);
  assert.equal(tracker.drainMargin(0), 0);
});

test('only positive request times are recorded, as 0.7.0 records them', () => {
  const tracker = new DispatchLatencyTracker();
  for (const s of [0, -1, Number.NaN, 2, 2, 2, 2]) tracker.record(s);
  assert.equal(tracker.drainMargin(undefined), undefined);
  tracker.record(2);
  assert.equal(tracker.drainMargin(undefined), 2);
});

test('the gate reads the time left at each start against the margin of the requests seen so far', () => {
  let now = 1_000_000;
  const tracker = new DispatchLatencyTracker();
  const gate = dispatchGate(now + 30_000, undefined, tracker, () => now);
  assert.equal(gate.mayStart(), true);
  for (let i = 0; i < 5; i++) gate.record(20);
  now += 9_000; // 21 s left, margin 20 s
  assert.equal(gate.mayStart(), true);
  now += 2_000; // 19 s left
  assert.equal(gate.mayStart(), false);
  const configured = dispatchGate(now + 5_000, 1, new DispatchLatencyTracker(), () => now);
  assert.equal(configured.mayStart(), true);
  now += 5_000;
  assert.equal(configured.mayStart(), false);
});
