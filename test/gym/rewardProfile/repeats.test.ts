import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPrimaryMetric, linearQuantile } from '../../../gym/rewardProfile/repeats';
import { python070 } from '../../helpers/python070';

test("linearQuantile is numpy's default quantile, interpolation included", () => {
  const samples = Array.from({ length: 40 }, (_, i) =>
    Array.from({ length: 1 + (i % 9) }, (_, j) => ((i + 3) * (j + 7) * 0.731) % 11),
  );
  const theirs = JSON.parse(
    python070(
      `import json, numpy as np; print(json.dumps([[float(np.quantile(s, q)) for q in (0.25, 0.75)] for s in ${JSON.stringify(samples)}]))`,
    ),
  );
  assert.deepEqual(
    samples.map((s) => {
      const sorted = Float64Array.from(s).sort();
      return [linearQuantile(sorted, 0.25), linearQuantile(sorted, 0.75)];
    }),
    theirs,
  );
});

test("isPrimaryMetric is 0.7.0's is_primary_metric", () => {
  const names = [
    ...['mean/reward', 'mean/max', 'mean/score_ci_lower', 'max/reward', 'sem/reward', 'se/x', 'p25/x'],
    ...['mean_across_repeats/mean/reward', 'sample_count', 'missing_count', '_ng_rollout_index', 'num_repeats'],
    ...['pass@1[avg-of-4]/accuracy/std_dev_across_runs', 'pass@4/accuracy', 'mean/_ng_attempt_index', 'reward'],
  ];
  const theirs = JSON.parse(
    python070(
      `import json; from nemo_gym.metrics_config import is_primary_metric; print(json.dumps([is_primary_metric(n) for n in ${JSON.stringify(names)}]))`,
    ),
  );
  assert.deepEqual(names.map(isPrimaryMetric), theirs);
});
