import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { publishPivotDataset } from '../../gym/publish';
import { validatePivotDataset } from '../../gym/validator';
import { readJsonlSync } from '../helpers/jsonl';
import { profileRow, publishDir, writeInputs } from './publishFixtures';

// What publish makes of its input rows: bad ones, their reward bytes, and partly profiled pivots.

test('bad inputs fail with file, line and reason', async (t) => {
  const dir = await publishDir(t, 'publish-');
  const opts = await writeInputs(dir);

  await writeFile(opts.localProfilePath, `${JSON.stringify(profileRow(7, [1, 0], 2))}\n`);
  await assert.rejects(publishPivotDataset(opts), /local_reward_profiling\.jsonl:1: _ng_task_index 7 has no candidate/);

  await writeFile(
    opts.localProfilePath,
    `${JSON.stringify(profileRow(0, [1, 0], 2))}\n${JSON.stringify(profileRow(0, [1, 0], 2))}\n`,
  );
  await assert.rejects(publishPivotDataset(opts), /:2: duplicate profile row for _ng_task_index 0/);

  const lines = (await readFile(opts.candidatesPath, 'utf8')).split('\n');
  await writeFile(opts.candidatesPath, [lines[0], '{"responses_create_params": {"input": []}}', ''].join('\n'));
  await assert.rejects(publishPivotDataset(opts), /candidates\.jsonl:2: expected_action/);

  await writeFile(opts.candidatesPath, `${lines[0]}\n{not json\n`);
  await assert.rejects(publishPivotDataset(opts), /candidates\.jsonl:2: invalid JSON/);

  await assert.rejects(publishPivotDataset({ ...opts, agentName: 'bad name' }));
});

test('published provenance writes source_reward as NeMo Gym writes a reward: a Python float', async (t) => {
  const dir = await publishDir(t, 'publish-');
  const opts = await writeInputs(dir);
  // The candidates file as NeMo Gym-written rollouts would give it, and as an integer.
  const lines = (await readFile(opts.candidatesPath, 'utf8')).split('\n');
  lines[0] = lines[0]!.replace('"source_reward":1,', '"source_reward":1.0,');
  await writeFile(opts.candidatesPath, lines.join('\n'));
  const result = await publishPivotDataset(opts);

  const published = (await readFile(result.pivotsPath, 'utf8')).split('\n');
  assert.match(published[0]!, /"source_reward":1\.0,"pivot_index":0,"depth":0,/);
  assert.match(published[1]!, /"source_reward":0\.5,"pivot_index":0,"depth":0,/);
  assert.match(published[0]!, /"local_pass_rate":0\.5,"local_num_samples":4\}/);
});

test('a pivot with fewer local samples than asked for is held back, or published marked partial under allow_partial', async (t) => {
  const dir = await publishDir(t, 'publish-partial-');
  const opts = { ...(await writeInputs(dir)), maxPivots: undefined };
  const partialOf = (rows: Record<string, unknown>[]) =>
    rows
      .filter((r) => (r.provenance as Record<string, unknown>).local_partial === true)
      .map((r) => (r.provenance as Record<string, unknown>).task_index);

  // Candidate 4 has 2 of its 4 samples (rewards 1, 0): mixed on what completed, but incomplete.
  const held = await publishPivotDataset(opts);
  assert.equal(held.counts.incomplete, 2);
  assert.equal(held.counts.published_partial, 0);
  const heldRows = readJsonlSync(held.pivotsPath);
  assert.deepEqual(
    heldRows.map((r) => (r.provenance as Record<string, unknown>).task_index),
    [0, 3, 6],
  );
  assert.deepEqual(partialOf(heldRows), []);

  const allowed = await publishPivotDataset({ ...opts, outDir: path.join(dir, 'allowed'), allowPartial: true });
  assert.equal(allowed.counts.incomplete, 1, 'the candidate without any sample stays incomplete');
  assert.equal(allowed.counts.published_partial, 1);
  const rows = readJsonlSync(allowed.pivotsPath);
  assert.deepEqual(partialOf(rows), [4]);
  const provenance = rows.find((r) => (r.provenance as Record<string, unknown>).task_index === 4)!.provenance as Record<
    string,
    unknown
  >;
  assert.equal(provenance.local_num_samples, 2);
  assert.equal(provenance.local_expected_num_samples, 4);
  assert.equal(provenance.local_pass_rate, 0.5);
  // Complete pivots carry no partial marker at all, so their bytes are what they were.
  for (const r of rows)
    if ((r.provenance as Record<string, unknown>).task_index !== 4)
      assert.equal('local_partial' in (r.provenance as object), false);
  const validation = await validatePivotDataset({
    path: allowed.pivotsPath,
    agentRef: 'demo_pivot_agent',
    requireFields: [],
    requireAnyFields: [],
    checkToolNames: true,
  });
  assert.equal(validation.exitCode, 0, validation.stderr);
});
