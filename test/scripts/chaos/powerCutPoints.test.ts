import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pointPassed, POWER_CUT_POINTS } from '../../../scripts/chaos/powerCutPoints';

// The power-loss harness skips a cut point the run's stage is past: waiting for it, the run would
// go on to its end and every later point would be missed too.

const point = (stage: string) => POWER_CUT_POINTS.find((p) => p.stage === stage)!;

test('a point is passed once the run is in a later stage, not before', () => {
  assert.equal(pointPassed(point('collect'), 'collect'), false);
  assert.equal(pointPassed(point('collect'), 'convert'), true);
  assert.equal(pointPassed(point('local_profile'), 'local_profile'), false);
  assert.equal(pointPassed(point('publish'), 'done'), true);
});

test("early profiling's points last through the run's local profile, where it files and is removed", () => {
  assert.equal(pointPassed(point('early_profiling'), 'convert'), false);
  assert.equal(pointPassed(point('early_profiling'), 'local_profile'), false);
  assert.equal(pointPassed(point('early_profiling'), 'publish'), true);
});

test('without a stage (no worker answered) or for the pool’s points, nothing is passed', () => {
  assert.equal(pointPassed(point('collect'), undefined), false);
  assert.equal(pointPassed(point('nightly'), 'done'), false);
  assert.equal(pointPassed(point('curriculum'), 'done'), false);
});
