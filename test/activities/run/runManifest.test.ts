import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import YAML from 'yaml';
import { prepareRun } from '../../../activities/run/prepare';
import { checkMaterializedInputs } from '../../../activities/run/runManifest';
import { prepareNightlyRun } from '../../../activities/pool/nightly';
import { prepareCurriculumRound, startCurriculum } from '../../../activities/pool/curriculum';
import { RUN_MANIFEST_FILE } from '../../../gym/runManifest';
import { checksums } from '../../helpers/runDir';

// A run id, pool or curriculum used again must name the same run: any difference in config, input
// or pipeline version is refused as a non-retryable error naming each item, before anything in the
// directory is written (its checksums stay the same); the same settings go on as before.

const repoRoot = path.resolve(__dirname, '../../..');
let base: string;
let settings: { baseDir: string; artifactsRoot: string };

before(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'pivot-run-manifest-'));
  settings = { baseDir: base, artifactsRoot: path.join(base, 'artifacts') };
  const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8')
    .split('\n')
    .slice(0, 3)
    .join('\n');
  writeFileSync(path.join(base, 'tasks.jsonl'), `${tasks}\n`);
  const config = {
    name: 'identity',
    seed: 7,
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: 2 },
    pool: { sources: ['sources/*.jsonl'] },
  };
  writeFileSync(path.join(base, 'run.yaml'), YAML.stringify(config));
  writeFileSync(path.join(base, 'run_k4.yaml'), YAML.stringify({ ...config, local_profile: { num_samples: 4 } }));
});

after(() => rmSync(base, { recursive: true, force: true }));

function refusedNaming(...items: RegExp[]) {
  return (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.nonRetryable, true);
    assert.equal(err.type, 'RunIdentityMismatch');
    for (const item of items) assert.match(err.message, item);
    return true;
  };
}

test('a run id used again with another seed or input is refused, naming each difference, and its directory is unchanged', async () => {
  const first = await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a' }, 'wf-a');
  const manifest = JSON.parse(readFileSync(path.join(first.runDir, RUN_MANIFEST_FILE), 'utf8'));
  assert.equal(manifest.config.seed, 7);
  assert.equal(manifest.inputs['collect.input_jsonl'].path, 'tasks.jsonl');
  assert.match(manifest.inputs['collect.input_jsonl'].sha256, /^[0-9a-f]{64}$/);
  const before = checksums(first.runDir);

  await assert.rejects(
    prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a', seed: 8 }, 'wf-a2'),
    refusedNaming(/^ {2}seed: 7 -> 8$/m),
  );
  await assert.rejects(
    prepareRun(settings, { config_path: 'run_k4.yaml', run_id: 'run-a', seed: 8 }, 'wf-a3'),
    refusedNaming(/^ {2}local_profile\.num_samples: 8 -> 4$/m, /^ {2}seed: 7 -> 8$/m),
  );
  const tasks = readFileSync(path.join(base, 'tasks.jsonl'), 'utf8');
  writeFileSync(path.join(base, 'tasks.jsonl'), `${tasks}${tasks.split('\n')[0]}\n`);
  await assert.rejects(
    prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a' }, 'wf-a4'),
    refusedNaming(/^ {2}collect\.input_jsonl sha256 [0-9a-f]{12}… -> [0-9a-f]{12}…$/m),
  );
  writeFileSync(path.join(base, 'tasks.jsonl'), tasks);
  assert.deepEqual(checksums(first.runDir), before, 'a refused resume changes nothing in the run directory');

  // The recorded settings resume as before.
  const again = await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a' }, 'wf-a5');
  assert.equal(again.runDir, first.runDir);
  assert.equal(
    readFileSync(path.join(first.runDir, RUN_MANIFEST_FILE), 'utf8'),
    JSON.stringify(manifest, null, 2) + '\n',
  );
  // Another run id is another run.
  await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-b', seed: 8 }, 'wf-b');
});

test('a nightly run refuses a pool mined with another config; new sources alone are not a difference', async () => {
  mkdirSync(path.join(base, 'sources'), { recursive: true });
  writeFileSync(path.join(base, 'sources', 'night1.jsonl'), '{}\n');
  const first = await prepareNightlyRun(settings, { input: { config_path: 'run.yaml' }, versionBase: 'v1' });
  assert.ok(readdirSync(first.poolDir).includes(RUN_MANIFEST_FILE));
  assert.ok(readdirSync(first.plan.runDir).includes(RUN_MANIFEST_FILE));
  const before = checksums(first.poolDir);
  await assert.rejects(
    prepareNightlyRun(settings, { input: { config_path: 'run_k4.yaml' }, versionBase: 'v2' }),
    refusedNaming(/local_profile\.num_samples: 8 -> 4/),
  );
  await assert.rejects(
    prepareNightlyRun(settings, { input: { config_path: 'run.yaml', seed: 9 }, versionBase: 'v2' }),
    refusedNaming(/seed: 7 -> 9/),
  );
  assert.deepEqual(checksums(first.poolDir), before);
  writeFileSync(path.join(base, 'sources', 'night2.jsonl'), '{}\n{}\n');
  const second = await prepareNightlyRun(settings, { input: { config_path: 'run.yaml' }, versionBase: 'v2' });
  assert.equal(second.newSources.length, 2, 'night 1 is not recorded as mined yet, so both count as new');
});

test('a curriculum started again with another config, or a round run again for another checkpoint, is refused', async () => {
  const pool = path.join(base, 'pool.jsonl');
  writeFileSync(
    pool,
    `${JSON.stringify({ expected_action: { type: 'message', content: 'x' }, provenance: { uuid: 'u1' } })}\n`,
  );
  const input = { config_path: 'run.yaml', initial_pool: 'pool.jsonl' };
  const state = await startCurriculum(settings, { input, workflowId: 'cur-1' });
  const before = checksums(state.curriculumDir);
  await assert.rejects(
    startCurriculum(settings, { input: { ...input, top_up_to: 5 }, workflowId: 'cur-1' }),
    refusedNaming(/curriculum\.top_up_to: null -> 5/),
  );
  writeFileSync(
    pool,
    `${JSON.stringify({ expected_action: { type: 'message', content: 'y' }, provenance: { uuid: 'u2' } })}\n`,
  );
  await assert.rejects(startCurriculum(settings, { input, workflowId: 'cur-1' }), refusedNaming(/initial_pool sha256/));
  assert.deepEqual(checksums(state.curriculumDir), before);

  await prepareCurriculumRound(settings, { input, state, checkpoint: { model: 'step-100' }, round: 1 });
  const roundDir = path.join(state.curriculumDir, 'runs', 'round-001');
  const roundBefore = checksums(roundDir, false);
  await prepareCurriculumRound(settings, { input, state, checkpoint: { model: 'step-100' }, round: 1 });
  assert.deepEqual(checksums(roundDir, false), roundBefore, 'a retried round rewrites the same bytes');
  const roundTouched = checksums(roundDir);
  await assert.rejects(
    prepareCurriculumRound(settings, { input, state, checkpoint: { model: 'step-200' }, round: 1 }),
    refusedNaming(/local_profile\.model\.model: "step-100" -> "step-200"/),
  );
  assert.deepEqual(checksums(roundDir), roundTouched);
});

test('a resume tells the run whether its local profile had begun, from the manifest alone', async () => {
  const fresh = await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-lp' }, 'wf-lp');
  assert.equal(fresh.localProfileBegun, undefined);
  assert.equal(
    (await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-lp' }, 'wf-lp2')).localProfileBegun,
    undefined,
  );
  const candidates = path.join(fresh.runDir, 'local_profile_materialized_inputs.jsonl');
  writeFileSync(candidates, '{}\n');
  await checkMaterializedInputs(fresh.runDir, 'local_profile', candidates);
  const resumed = await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-lp' }, 'wf-lp3');
  assert.equal(resumed.localProfileBegun, true);
});
