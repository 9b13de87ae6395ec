import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  NO_PUBLISHED_DIGESTS,
  damagedFiles,
  materializedMetaOf,
  remedyOf,
  withPublished,
} from '../../gym/publishedDigests';

// The rules of the published-files sidecar: entries sorted by path whatever order steps record them
// in, an entry kept when a later step records the same bytes, and what a resume does per file.

const digest = (c: string) => c.repeat(64);

test('entries are sorted by path; the same bytes recorded again keep the step that first published them', () => {
  const first = withPublished(NO_PUBLISHED_DIGESTS, {
    'rollouts.jsonl': { step: 'collect finish', sha256: digest('b'), bytes: 2 },
    'dataset/pivots.jsonl': { step: 'publish', sha256: digest('a'), bytes: 1 },
  });
  assert.deepEqual(Object.keys(first.files), ['dataset/pivots.jsonl', 'rollouts.jsonl']);
  const again = withPublished(first, { 'rollouts.jsonl': { step: 'prepare', sha256: digest('b'), bytes: 2 } });
  assert.deepEqual(again, first);
  const changed = withPublished(first, { 'rollouts.jsonl': { step: 'prepare', sha256: digest('c'), bytes: 2 } });
  assert.equal(changed.files['rollouts.jsonl']!.step, 'prepare');
});

test('a manifest that no longer reads as one is refused, materialized files are rebuilt, the rest is written again', () => {
  assert.equal(remedyOf('run_manifest.json', false), 'refuse');
  assert.equal(remedyOf('run_manifest.json', true), 'identity');
  for (const file of ['jsonl', 'offsets.bin', 'rows.bin', 'meta.json'])
    assert.equal(remedyOf(`local_profile_materialized_inputs.${file}`, true), 'rebuild');
  assert.equal(
    materializedMetaOf('local_profile_materialized_inputs.rows.bin'),
    'local_profile_materialized_inputs.meta.json',
  );
  assert.equal(materializedMetaOf('local_profile.jsonl'), undefined);
  for (const file of ['rollouts.jsonl', 'dataset/pivots.jsonl', 'run_summary.json', 'pivot_candidates.jsonl'])
    assert.equal(remedyOf(file, true), 'rewritten');
});

test('a file is damaged when missing or when its digest or size differs', () => {
  const recorded = withPublished(NO_PUBLISHED_DIGESTS, {
    a: { step: 's', sha256: digest('a'), bytes: 1 },
    b: { step: 's', sha256: digest('b'), bytes: 2 },
    c: { step: 's', sha256: digest('c'), bytes: 3 },
  });
  const found = new Map([
    ['a', { sha256: digest('a'), bytes: 1 }],
    ['b', { sha256: digest('d'), bytes: 2 }],
  ]);
  assert.deepEqual(
    damagedFiles(recorded, found, true).map((d) => [d.file, d.found?.sha256]),
    [
      ['b', digest('d')],
      ['c', undefined],
    ],
  );
});
