import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import YAML from 'yaml';
import { prepareRun } from '../../../activities/run/prepare';
import {
  PUBLISHED_FILE_DAMAGED,
  dropDamaged,
  inspectPublished,
  recordPublished,
} from '../../../activities/run/publishedDigests';
import { PUBLISHED_DIGESTS_FILE } from '../../../gym/publishedDigests';
import { RUN_MANIFEST_FILE } from '../../../gym/runManifest';
import { checksums } from '../../helpers/runDir';

// The published-files sidecar on real files: each step's files are recorded by content, a retry
// records nothing new, and a truncated, changed or missing file is found by name with the recorded
// and the found digest; a resume removes what it makes again and refuses what nothing can rebuild.

const repoRoot = path.resolve(__dirname, '../../..');
let base: string;
let settings: { baseDir: string; artifactsRoot: string };

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

before(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'pivot-published-digests-'));
  settings = { baseDir: base, artifactsRoot: path.join(base, 'artifacts') };
  const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8').split('\n').slice(0, 2);
  writeFileSync(path.join(base, 'tasks.jsonl'), `${tasks.join('\n')}\n`);
  const config = { name: 'digests', seed: 7, collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent' } };
  writeFileSync(path.join(base, 'run.yaml'), YAML.stringify(config));
});

after(() => rmSync(base, { recursive: true, force: true }));

/** A run directory holding a few files as steps leave them, each recorded by the step named. */
async function runDirWithFiles(name: string): Promise<string> {
  const runDir = path.join(base, name);
  mkdirSync(path.join(runDir, 'dataset'), { recursive: true });
  const files: Record<string, string> = {
    'rollouts.jsonl': '{"a":1}\n{"a":2}\n',
    'rollouts_materialized_inputs.rows.bin': 'rows-index-bytes',
    'rollouts_materialized_inputs.meta.json': '{"rows":2}',
    'dataset/pivots.jsonl': '{"p":1}\n',
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(runDir, file), text);
  await recordPublished(runDir, 'collect materialize', [
    path.join(runDir, 'rollouts_materialized_inputs.rows.bin'),
    path.join(runDir, 'rollouts_materialized_inputs.meta.json'),
  ]);
  await recordPublished(runDir, 'collect finish', [path.join(runDir, 'rollouts.jsonl')]);
  await recordPublished(runDir, 'publish', [path.join(runDir, 'dataset/pivots.jsonl')]);
  return runDir;
}

test('each published file is recorded by content, relative to the run directory; a retry rewrites nothing', async () => {
  const runDir = await runDirWithFiles('record');
  const sidecar = JSON.parse(readFileSync(path.join(runDir, PUBLISHED_DIGESTS_FILE), 'utf8'));
  assert.deepEqual(Object.keys(sidecar.files), [
    'dataset/pivots.jsonl',
    'rollouts.jsonl',
    'rollouts_materialized_inputs.meta.json',
    'rollouts_materialized_inputs.rows.bin',
  ]);
  assert.deepEqual(sidecar.files['rollouts.jsonl'], {
    step: 'collect finish',
    sha256: sha256('{"a":1}\n{"a":2}\n'),
    bytes: 16,
  });
  const before = checksums(runDir);
  await recordPublished(runDir, 'collect finish', [path.join(runDir, 'rollouts.jsonl')]);
  assert.deepEqual(checksums(runDir), before, 'a retried step leaves the sidecar as it was, mtime included');
  assert.deepEqual(await inspectPublished(runDir), []);
  await assert.rejects(recordPublished(runDir, 'convert', [path.join(base, 'run.yaml')]), /outside its run directory/);
});

test('a truncated, a changed and a missing file are each named with the recorded and found digests', async () => {
  const runDir = await runDirWithFiles('damage');
  truncateSync(path.join(runDir, 'rollouts.jsonl'), 8);
  writeFileSync(path.join(runDir, 'dataset/pivots.jsonl'), '{"p":2}\n');
  rmSync(path.join(runDir, 'rollouts_materialized_inputs.rows.bin'));

  const damaged = await inspectPublished(runDir);
  assert.deepEqual(
    damaged.map((d) => [d.file, d.remedy, d.found?.bytes]),
    [
      ['dataset/pivots.jsonl', 'rewritten', 8],
      ['rollouts.jsonl', 'rewritten', 8],
      ['rollouts_materialized_inputs.rows.bin', 'rebuild', undefined],
    ],
  );
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (message: string) => warnings.push(message);
  try {
    await dropDamaged(runDir, damaged);
  } finally {
    console.warn = warn;
  }
  assert.equal(warnings.length, 3);
  assert.equal(
    warnings[0],
    `${runDir}/dataset/pivots.jsonl is changed since it was published: expected sha256 ${sha256('{"p":1}\n')} ` +
      `(8 bytes), found sha256 ${sha256('{"p":2}\n')} (8 bytes); a resume writes it again (published by publish)`,
  );
  assert.match(
    warnings[1]!,
    new RegExp(
      `rollouts\\.jsonl is truncated .*expected sha256 ${sha256('{"a":1}\n{"a":2}\n')} \\(16 bytes\\), found sha256 ${sha256('{"a":1}\n')} \\(8 bytes\\)`,
    ),
  );
  assert.match(warnings[2]!, /rows\.bin is missing .*found no file; a resume makes it again from the stage's input/);
  // Removed: the rewritten files, and the meta file that makes the stage materialize again.
  assert.equal(existsSync(path.join(runDir, 'rollouts.jsonl')), false);
  assert.equal(existsSync(path.join(runDir, 'dataset/pivots.jsonl')), false);
  assert.equal(existsSync(path.join(runDir, 'rollouts_materialized_inputs.meta.json')), false);
});

test('a resume refuses a manifest that no longer reads as one, naming it, and checks one that still does', async () => {
  const plan = await prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a' }, 'wf-a');
  const manifestPath = path.join(plan.runDir, RUN_MANIFEST_FILE);
  const sidecarPath = path.join(plan.runDir, PUBLISHED_DIGESTS_FILE);
  const recorded = readFileSync(manifestPath);
  const entry = () => JSON.parse(readFileSync(sidecarPath, 'utf8')).files[RUN_MANIFEST_FILE];
  assert.deepEqual(entry(), { step: 'prepare', sha256: sha256(recorded), bytes: recorded.length });
  const resume = (workflowId: string) => prepareRun(settings, { config_path: 'run.yaml', run_id: 'run-a' }, workflowId);

  const truncated = recorded.subarray(0, Math.floor(recorded.length / 2));
  writeFileSync(manifestPath, truncated);
  const before = checksums(plan.runDir);
  await assert.rejects(resume('wf-a2'), (err) => {
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.nonRetryable, true);
    assert.equal(err.type, PUBLISHED_FILE_DAMAGED);
    assert.ok(
      err.message.includes(
        `${manifestPath} is truncated since it was published: expected sha256 ${sha256(recorded)} ` +
          `(${recorded.length} bytes), found sha256 ${sha256(truncated)} (${truncated.length} bytes); it cannot be rebuilt`,
      ),
      err.message,
    );
    return true;
  });
  assert.deepEqual(checksums(plan.runDir), before, 'a refused resume changes nothing');

  // Still a manifest, and of this run: the resume goes on, says so, and records the bytes it found.
  const padded = Buffer.concat([recorded, Buffer.from('\n')]);
  writeFileSync(manifestPath, padded);
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (message: string) => warnings.push(message);
  try {
    await resume('wf-a3');
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warnings, [
    `${manifestPath} is changed since it was published: expected sha256 ${sha256(recorded)} (${recorded.length} bytes), ` +
      `found sha256 ${sha256(padded)} (${padded.length} bytes); a resume goes on only if it still names this run ` +
      '(config, inputs, materialized inputs)',
  ]);
  assert.deepEqual(entry(), { step: 'prepare', sha256: sha256(padded), bytes: padded.length });

  // Still a manifest, of another input: refused as every other identity is.
  const edited = Buffer.from(padded);
  const digestAt = edited.indexOf('"sha256": "', edited.indexOf('"inputs"')) + '"sha256": "'.length;
  edited[digestAt] = edited[digestAt] === 0x30 ? 0x31 : 0x30;
  writeFileSync(manifestPath, edited);
  await assert.rejects(resume('wf-a4'), /^ {2}collect\.input_jsonl sha256 [0-9a-f]{12}… -> [0-9a-f]{12}…$/m);

  writeFileSync(manifestPath, padded);
  writeFileSync(sidecarPath, '{"digests_version": 1, "files": ');
  await assert.rejects(
    resume('wf-a5'),
    new RegExp(`${PUBLISHED_DIGESTS_FILE} is damaged \\(.*JSON.*\\), so the run's files cannot be checked`),
  );
});
