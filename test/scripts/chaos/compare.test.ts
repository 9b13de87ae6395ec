import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { compareRunDirs } from '../../../scripts/chaos/compare';

// A finished run has removed early profiling's files, whatever became of it: the comparison every
// chaos, power-loss and fleet scenario makes must name any it finds, not pass over them.

function runDir(root: string, name: string, extra: string[] = []): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'dataset'), { recursive: true });
  writeFileSync(path.join(dir, 'pipeline_config.yaml'), 'seed: 7\n');
  writeFileSync(path.join(dir, 'dataset', 'pivots.jsonl'), '{"a":1}\n');
  for (const rel of extra) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), '{}\n');
  }
  return dir;
}

test('two runs with the same files compare identical', (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'compare-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  assert.equal(compareRunDirs(runDir(root, 'a'), runDir(root, 'b')).identical, true);
});

test("early profiling's segments, filed samples or staging left by a run are named as left behind", (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'compare-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const left = [
    'prefetch/rows-0-16/rollouts.jsonl',
    'local_profile_prefetched/000000.jsonl',
    'local_profile_prefetched.123-0a1b2c3d.tmp/000000.jsonl',
  ];
  const result = compareRunDirs(runDir(root, 'a'), runDir(root, 'b', left));
  assert.equal(result.identical, false);
  assert.deepEqual(result.differing, [
    'local_profile_prefetched.123-0a1b2c3d.tmp/000000.jsonl (extra)',
    'local_profile_prefetched/000000.jsonl (early profiling left behind)',
    'prefetch/rows-0-16/rollouts.jsonl (early profiling left behind)',
  ]);
});

test('early profiling left behind by the reference run is named too', (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'compare-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const left = ['prefetch/rows-0-16/candidates.jsonl'];
  const result = compareRunDirs(runDir(root, 'a', left), runDir(root, 'b', left));
  assert.deepEqual(result.differing, [
    'prefetch/rows-0-16/candidates.jsonl (early profiling left behind by the reference run)',
  ]);
});
