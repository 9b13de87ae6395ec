import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pythonPowHalf } from '../../../gym/rewardProfile/powHalf';
import { python070 } from '../../helpers/python070';

test("pythonPowHalf(n) is Python's n ** 0.5, where it is and where it is not the square root", () => {
  // Every n of a stretch holding both kinds of misrounding, and a spread up to the table's limit.
  const ns = [
    ...Array.from({ length: 3000 }, (_, i) => 2900 + i),
    ...Array.from({ length: 400 }, (_, i) => 1 + i * 4999),
  ];
  const theirs = JSON.parse(python070(`import json; print(json.dumps([n ** 0.5 for n in ${JSON.stringify(ns)}]))`));
  assert.deepEqual(
    ns.map((n) => pythonPowHalf(n)),
    theirs,
  );
  assert.ok(ns.some((n) => pythonPowHalf(n) > Math.sqrt(n)) && ns.some((n) => pythonPowHalf(n) < Math.sqrt(n)));
});
