import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  durableOverBare,
  durableOverBareRolloutsAlone,
  durableOverBareSimulatorsEqual,
  withoutTemporalRatios,
} from '../../../scripts/bench/throughputReport';

// Two sides of a throughput run as the bench sums them: rollouts, seconds, CPU seconds per process.
const side = (rows: number, seconds: number, simulators: number, worker = 0) => ({
  rows,
  seconds,
  cpu: { simulators, worker },
});

test('the headline is the durable rate over the bare rate', () => {
  assert.equal(durableOverBare({ bare: side(1200, 10, 9), durable: side(1200, 12, 9) }), 10 / 12);
});

test('with the simulators at the same CPU per rollout on both sides the estimate is the headline', () => {
  const tp = { bare: side(1200, 10, 9), durable: side(2400, 25, 18, 5) };
  assert.equal(durableOverBareSimulatorsEqual(tp), durableOverBare(tp));
});

test('simulators that cost 10% more per rollout on the durable side raise the estimate by 10%', () => {
  // Per rollout: bare 8 ms, durable 8.8 ms; the worker's own CPU does not enter it.
  const tp = { bare: side(1000, 8, 8), durable: side(1000, 10, 8.8, 2) };
  assert.ok(Math.abs(durableOverBareSimulatorsEqual(tp) - 0.8 * 1.1) < 1e-12);
});

test("without the simulators' CPU the estimate is not a number rather than a guess", () => {
  const tp = { bare: { rows: 10, seconds: 1, cpu: {} }, durable: { rows: 10, seconds: 1, cpu: {} } };
  assert.ok(Number.isNaN(durableOverBareSimulatorsEqual(tp)));
});

test("the side without Temporal splits the headline into the stage's own work and what Temporal adds", () => {
  const tp = { bare: side(1000, 8, 8), durable: side(1000, 10, 8), inProcess: side(1000, 8.5, 8) };
  const ratios = withoutTemporalRatios(tp);
  assert.ok(ratios);
  assert.ok(Math.abs(ratios.stageOverBare - 8 / 8.5) < 1e-12);
  assert.ok(Math.abs(ratios.durableOverStage - 0.85) < 1e-12);
  assert.ok(Math.abs(ratios.stageOverBare * ratios.durableOverStage - durableOverBare(tp)) < 1e-12);
  assert.equal(withoutTemporalRatios({ bare: tp.bare, durable: tp.durable }), undefined);
});

test("the bare loop's rollouts alone leave its tail out of its time", () => {
  // 1000 rollouts in 10 s, 0.5 s of it the tail: 100/s with the tail, 1000/9.5 without.
  const tp = { bare: { ...side(1000, 10, 9), tailSeconds: 0.5 }, durable: side(1000, 10.5, 9) };
  assert.ok(Math.abs(durableOverBareRolloutsAlone(tp) - 9.5 / 10.5) < 1e-12);
  assert.ok(durableOverBareRolloutsAlone(tp) < durableOverBare(tp));
});
