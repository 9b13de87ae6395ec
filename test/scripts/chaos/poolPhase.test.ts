import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { comparePools, POOL_DIR, type PoolPhaseResult } from '../../../scripts/chaos/poolPhase';

// The power-loss harness compares two hosts' pools: equal but for the wall-clock version name and
// the host's own paths, and every other difference (a row, a leftover, a missing file) named.

/** A host's pool with one nightly version and one curriculum round, as the harness leaves it. */
function pool(baseDir: string, host: string, version: string, pivots: string): PoolPhaseResult {
  const root = path.join(baseDir, host);
  const poolDir = path.join(root, POOL_DIR);
  const curriculumDir = path.join(poolDir, 'curricula', `power-loss-${host}-curriculum`);
  for (const dir of [`versions/${version}`, `runs/${version}/local_profile_shards`])
    mkdirSync(path.join(poolDir, dir), { recursive: true });
  mkdirSync(path.join(curriculumDir, 'versions/round-001'), { recursive: true });
  mkdirSync(path.join(curriculumDir, 'runs/round-001'), { recursive: true });
  writeFileSync(path.join(poolDir, 'versions', version, 'pivots.jsonl'), pivots);
  writeFileSync(path.join(poolDir, 'versions', version, 'version.json'), JSON.stringify({ version, kind: 'nightly' }));
  writeFileSync(
    path.join(poolDir, 'manifest.json'),
    JSON.stringify({ sources: [{ path: 'incoming/r.jsonl', version }] }),
  );
  writeFileSync(path.join(poolDir, 'runs', version, 'local_profile_shards', 'attempt'), host);
  symlinkSync(`versions/${version}`, path.join(poolDir, 'latest'));
  writeFileSync(
    path.join(curriculumDir, 'run_manifest.json'),
    JSON.stringify({ initial_pool: `${host}/${POOL_DIR}/versions/${version}/pivots.jsonl`, dir: curriculumDir }),
  );
  writeFileSync(path.join(curriculumDir, 'versions/round-001/pivots.jsonl'), pivots);
  writeFileSync(path.join(curriculumDir, 'runs/round-001/pool.jsonl'), host);
  symlinkSync('versions/round-001', path.join(curriculumDir, 'latest'));
  return { baseDir, artifactsRoot: root, nightlyVersion: version, curriculumDir };
}

test('two pools equal but for version names, host paths and runs/ compare identical; a changed row does not', () => {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-pool-compare-'));
  try {
    const reference = pool(baseDir, 'undisturbed', '20261127T225019Z', '{"a":1}\n');
    const same = pool(baseDir, 'powerloss', '20261127T225041Z', '{"a":1}\n');
    assert.deepEqual(comparePools(reference, same), { identical: true, filesCompared: 7, differing: [] });

    const changed = pool(baseDir, 'other', '20261127T230000Z', '{"a":2}\n');
    writeFileSync(path.join(changed.artifactsRoot, POOL_DIR, 'versions', '.20261127T230000Z.staging'), '');
    assert.deepEqual(comparePools(reference, changed).differing, [
      `${POOL_DIR}/curricula/<curriculum>/versions/round-001/pivots.jsonl`,
      `${POOL_DIR}/versions/<version>/pivots.jsonl`,
      `${POOL_DIR}/versions/.<version>.staging (extra)`,
    ]);
  } finally {
    rmSync(baseDir, { recursive: true, force: true });
  }
});
