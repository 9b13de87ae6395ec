import assert from 'node:assert/strict';
import { test } from 'node:test';
import vm from 'node:vm';
import { collectStartupGarbage } from '../../workers/startupGarbage';

test('collectStartupGarbage frees unreachable start-up objects and leaves no gc() behind', () => {
  let garbage: Array<{ i: number; s: string }> | undefined = Array.from({ length: 300_000 }, (_, i) => ({
    i,
    s: `row ${i}`.padEnd(48, '.'),
  }));
  assert.equal(garbage.length, 300_000);
  // Dropping the only reference is the point: the collection below must be able to free the rows.
  // eslint-disable-next-line no-useless-assignment
  garbage = undefined;
  const before = process.memoryUsage().heapUsed;
  collectStartupGarbage();
  const after = process.memoryUsage().heapUsed;
  // ~30 MB of rows were unreachable; a collection that ran frees most of it.
  assert.ok(before - after > 15e6, `heap used ${before} -> ${after}`);
  assert.equal(vm.runInNewContext('typeof gc'), 'undefined', 'contexts created later (workflow sandboxes) get no gc()');
});
