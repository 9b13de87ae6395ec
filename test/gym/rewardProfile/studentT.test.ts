import assert from 'node:assert/strict';
import { test } from 'node:test';
import { studentT975, tInterval95 } from '../../../gym/rewardProfile/studentT';
import { python070 } from '../../helpers/python070';

test("tInterval95 is scipy's stats.t.interval(0.95) to the bit up to 1000 degrees of freedom", () => {
  const cases = Array.from({ length: 60 }, (_, i) => ({
    n: 2 + ((i * 37) % 1000),
    mean: i * 0.37 - 3,
    se: 0.01 + i / 7,
  }));
  const theirs = JSON.parse(
    python070(
      `import json; from scipy import stats; print(json.dumps([[float(x) for x in stats.t.interval(0.95, df=c["n"] - 1, loc=c["mean"], scale=c["se"])] for c in ${JSON.stringify(cases)}]))`,
    ),
  );
  assert.deepEqual(
    cases.map((c) => tInterval95(c.mean, c.se, c.n)),
    theirs,
  );
});

test('beyond the table, the quantile is within two ulps of scipy', () => {
  const dfs = [1001, 1500, 3000, 10_000, 100_000];
  const theirs = JSON.parse(
    python070(
      `import json; from scipy import special; print(json.dumps([float(special.stdtrit(d, 0.975)) for d in ${JSON.stringify(dfs)}]))`,
    ),
  ) as number[];
  dfs.forEach((df, i) => assert.ok(Math.abs(studentT975(df) - theirs[i]!) <= 2 * 2 ** -51, `df ${df}`));
});
