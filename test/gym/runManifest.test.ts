import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import {
  PIPELINE_VERSION,
  canonicalJson,
  runIdentityMessage,
  runManifestDifferences,
  type RunManifest,
} from '../../gym/runManifest';

const digest = (c: string, p = 'tasks.jsonl') => ({ path: p, sha256: c.repeat(64).slice(0, 64), bytes: 10 });

function manifest(config: Record<string, unknown>, over: Partial<RunManifest> = {}): RunManifest {
  return {
    manifest_version: 1,
    pipeline_version: PIPELINE_VERSION,
    config_sha256: '0'.repeat(64),
    config,
    inputs: { 'collect.input_jsonl': digest('a') },
    materialized: {},
    ...over,
  };
}
// The check trusts config_sha256 to say whether configs differ, as the activity computes it.
const withSha = (m: RunManifest): RunManifest => ({
  ...m,
  config_sha256: createHash('sha256').update(canonicalJson(m.config)).digest('hex'),
});

const base = {
  name: 'demo',
  seed: 7,
  collect: { input_jsonl: 'tasks.jsonl', num_repeats: 4 },
  filter: { allow_partial: false },
};

test('the same identity has no differences, whatever the key order', () => {
  const a = withSha(manifest(base));
  const b = withSha(
    manifest({
      filter: { allow_partial: false },
      collect: { num_repeats: 4, input_jsonl: 'tasks.jsonl' },
      seed: 7,
      name: 'demo',
    }),
  );
  assert.equal(canonicalJson(a.config), canonicalJson(b.config));
  assert.deepEqual(runManifestDifferences(a, { ...b, config_sha256: a.config_sha256 }), []);
});

test('each differing item is named: config keys old -> new, then input and materialized digests', () => {
  const recorded = withSha(
    manifest(base, { materialized: { collect: digest('c', 'rollouts_materialized_inputs.jsonl') } }),
  );
  const current = withSha(
    manifest(
      { ...base, seed: 8, collect: { ...base.collect, limit: 3 }, filter: {} },
      {
        inputs: { 'collect.input_jsonl': digest('d') },
        materialized: { collect: digest('e', 'rollouts_materialized_inputs.jsonl') },
        pipeline_version: 'pivot-miner/0',
      },
    ),
  );
  assert.deepEqual(runManifestDifferences(recorded, current), [
    `pipeline_version: ${PIPELINE_VERSION} -> pivot-miner/0`,
    'collect.limit: (unset) -> 3',
    'filter: (unset) -> {}',
    'filter.allow_partial: false -> (unset)',
    'seed: 7 -> 8',
    'collect.input_jsonl sha256 aaaaaaaaaaaa… -> dddddddddddd…',
    'collect materialized inputs sha256 cccccccccccc… -> eeeeeeeeeeee…',
  ]);
  const message = runIdentityMessage('run run-a', ['seed: 7 -> 8'], '/x/run_manifest.json');
  assert.match(message, /^run run-a was started with another config.*\n {2}seed: 7 -> 8\n/s);
  assert.match(message, /nothing in it was changed/);
});

test('materialized inputs are compared only once both runs have made them', () => {
  const recorded = withSha(manifest(base, { materialized: { collect: digest('c') } }));
  assert.deepEqual(runManifestDifferences(recorded, withSha(manifest(base))), []);
  assert.deepEqual(runManifestDifferences(withSha(manifest(base)), recorded), []);
});

test('string values are shown quoted, so "7" and 7 read apart', () => {
  const diff = runManifestDifferences(
    withSha(manifest({ ...base, name: 'a' })),
    withSha(manifest({ ...base, name: 'b' })),
  );
  assert.deepEqual(diff, ['name: "a" -> "b"']);
});
