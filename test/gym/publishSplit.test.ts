import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { publishPivotDataset } from '../../gym/publish';
import type { PublishOptions } from '../../gym/publishOptions';
import { validatePivotDataset } from '../../gym/validator';
import { readJsonlSync } from '../helpers/jsonl';
import { call, candidate, profileRow, publishDir } from './publishFixtures';

// Publishing with a pass-rate ceiling, an action-mix cap and a train/validation split.

/** 20 source trajectories of 3 pivots each; pivot p of trajectory t passes ((t + 3p) % 7 + 1) / 8 locally. */
async function writeSplitInputs(dir: string, order: (rows: number[]) => number[] = (rows) => rows) {
  const rows = Array.from({ length: 60 }, (_, i) => i);
  const ordered = order(rows);
  const candidateOf = (i: number) => {
    const t = Math.floor(i / 3);
    const p = i % 3;
    const action = p === 2 ? { type: 'message', content: `done ${t}` } : call('get_weather', { city: `c${t}-${p}` });
    const row = candidate(i, action, p);
    const provenance = row.provenance as Record<string, unknown>;
    Object.assign(provenance, {
      source_file: t < 10 ? 'a/rollouts.jsonl' : 'b/rollouts.jsonl',
      task_index: t % 10,
      rollout_index: t % 2,
      pivot_index: p,
      uuid: `00000000-0000-5000-8000-${String(i).padStart(12, '0')}`,
    });
    return row;
  };
  const candidatesPath = path.join(dir, 'candidates.jsonl');
  const localProfilePath = path.join(dir, 'local_reward_profiling.jsonl');
  const skippedPath = path.join(dir, 'candidates_skipped.jsonl');
  await writeFile(candidatesPath, ordered.map((i) => `${JSON.stringify(candidateOf(i))}\n`).join(''));
  await writeFile(
    localProfilePath,
    ordered
      .map((i, line) => {
        const passes = ((Math.floor(i / 3) + 3 * (i % 3)) % 7) + 1;
        const rewards = Array.from({ length: 8 }, (_, k) => (k < passes ? 1 : 0));
        return `${JSON.stringify(profileRow(line, rewards, 8))}\n`;
      })
      .join(''),
  );
  // Trajectory 19 met trajectory 0's first pivot again: they must land on one side.
  const duplicate = {
    reason: 'duplicate',
    detail: 'same state and expected action',
    provenance: { source_file: 'b/rollouts.jsonl', source_line: 1, task_index: 9, rollout_index: 1 },
    duplicate_of: '00000000-0000-5000-8000-000000000000',
  };
  await writeFile(skippedPath, `${JSON.stringify(duplicate)}\n`);
  return {
    candidatesPath,
    localProfilePath,
    skippedPath,
    outDir: path.join(dir, 'out'),
    agentName: 'demo_pivot_agent',
    datasetName: 'demo',
    jsonlFpath: 'data/demo_pivots.jsonl',
    maxPassRate: 0.8,
    maxShare: { message: 0.2 },
    validationFraction: 0.25,
    validationSeed: 3,
  } satisfies PublishOptions;
}

const trajectoryOf = (row: Record<string, unknown>) => {
  const p = row.provenance as { source_file: string; task_index: number; rollout_index: number };
  return `${p.source_file}#${p.task_index}#${p.rollout_index}`;
};

test('the ceiling, the action mix and the trajectory split hold together, and the funnel adds up', async (t) => {
  const dir = await publishDir(t, 'publish-split-');
  const opts = await writeSplitInputs(dir);
  const result = await publishPivotDataset(opts);
  assert.ok(result.validationPivotsPath);
  const train = readJsonlSync(result.pivotsPath);
  const validation = readJsonlSync(result.validationPivotsPath);
  assert.ok(train.length > 0 && validation.length > 0, `${train.length} train, ${validation.length} validation`);

  for (const [name, rows] of [
    ['train', train],
    ['validation', validation],
  ] as const) {
    for (const row of rows) {
      const rate = (row.provenance as Record<string, number>).local_pass_rate!;
      assert.ok(rate > 0 && rate < 0.8, `${name}: pass rate ${rate}`);
    }
    const messages = rows.filter((r) => (r.expected_action as { type: string }).type === 'message').length;
    assert.ok(messages / rows.length <= 0.2, `${name}: ${messages} of ${rows.length} are messages`);
  }
  const trainTrajectories = new Set(train.map(trajectoryOf));
  const shared = validation.map(trajectoryOf).filter((k) => trainTrajectories.has(k));
  assert.deepEqual(shared, [], 'no source trajectory on both sides');

  const config = YAML.parse(await readFile(result.gymConfigPath, 'utf8'));
  const datasets = config.demo_pivot_agent.responses_api_agents.tool_simulation_agent.datasets;
  assert.deepEqual(
    datasets.map((d: Record<string, unknown>) => [d.name, d.type, d.jsonl_fpath]),
    [
      ['demo', 'train', 'data/demo_pivots.jsonl'],
      ['demo_validation', 'validation', 'data/demo_pivots_validation.jsonl'],
    ],
  );
  const validationMetrics = JSON.parse(
    await readFile(path.join(opts.outDir, 'pivots_validation_metrics.json'), 'utf8'),
  );
  assert.equal(validationMetrics.type, 'validation');
  assert.equal(validationMetrics['Number of examples'], validation.length);

  const selection = JSON.parse(await readFile(result.selectionMetricsPath, 'utf8'));
  const c = selection.counts;
  assert.equal(selection.counts_add_up, true);
  assert.equal(
    c.published + c.all_pass + c.all_fail + c.constant + c.incomplete + c.over_ceiling + c.over_budget + c.over_share,
    60,
  );
  assert.ok(c.over_ceiling > 0 && c.over_share > 0, JSON.stringify(c));
  assert.equal(selection.by_split.train.published, train.length);
  assert.equal(selection.by_split.validation.published, validation.length);
  assert.equal(selection.by_split.train.published_trajectories, trainTrajectories.size);
  assert.equal(
    selection.by_split.validation.action_mix.after.message,
    validation.length - validation.filter((r) => (r.expected_action as { type: string }).type !== 'message').length,
  );
  assert.deepEqual(result.publishedBySplit, { train: train.length, validation: validation.length });

  const html = await readFile(result.reportPath, 'utf8');
  assert.match(html, /<table id="splits">/);
  assert.match(html, /<table id="action-mix">/);
  assert.match(html, new RegExp(`= 60 candidates \\(adds up\\)`));

  for (const file of [result.pivotsPath, result.validationPivotsPath]) {
    const validated = await validatePivotDataset({
      path: file,
      agentRef: 'demo_pivot_agent',
      checkToolNames: true,
      gymConfigPath: result.gymConfigPath,
    });
    assert.equal(validated.exitCode, 0, validated.stderr);
  }
});

test('the split and the drops depend on the seed and the rows, not on the order rows arrive in', async (t) => {
  const dir = await publishDir(t, 'publish-split-order-');
  const sides = async (sub: string, order?: (rows: number[]) => number[], seed = 3) => {
    const opts = await writeSplitInputs(await mkdtemp(path.join(dir, sub)), order);
    const result = await publishPivotDataset({ ...opts, validationSeed: seed });
    const uuids = (file: string) =>
      readJsonlSync(file)
        .map((r) => (r.provenance as { uuid: string }).uuid)
        .sort();
    return { train: uuids(result.pivotsPath), validation: uuids(result.validationPivotsPath!) };
  };
  const forward = await sides('forward');
  const shuffled = (rows: number[]) =>
    rows
      .map((r, i) => [(i * 37) % 61, r] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, r]) => r);
  assert.deepEqual(await sides('reversed', (rows) => [...rows].reverse()), forward);
  assert.deepEqual(await sides('shuffled', shuffled), forward);
  assert.notDeepEqual(await sides('seed', undefined, 4), forward, 'another seed, another split');
});

test('the duplicate audit joins trajectories: a kept pivot and its duplicate trajectory share a side', async (t) => {
  const dir = await publishDir(t, 'publish-split-join-');
  const sidesOf = async (opts: PublishOptions) => {
    const result = await publishPivotDataset(opts);
    const sideOf = new Map<string, string>();
    for (const [side, file] of [
      ['train', result.pivotsPath],
      ['validation', result.validationPivotsPath!],
    ] as const)
      for (const row of readJsonlSync(file)) sideOf.set(trajectoryOf(row), side);
    return [sideOf.get('a/rollouts.jsonl#0#0'), sideOf.get('b/rollouts.jsonl#9#1')];
  };
  let apartWithoutJoin = 0;
  for (let seed = 0; seed < 12; seed++) {
    const opts = {
      ...(await writeSplitInputs(await mkdtemp(path.join(dir, `s${seed}-`)))),
      maxPassRate: undefined,
      maxShare: undefined,
      validationSeed: seed,
    };
    const [kept, duplicate] = await sidesOf(opts);
    assert.ok(kept !== undefined && kept === duplicate, `seed ${seed}: ${kept} and ${duplicate}`);
    const [alone, other] = await sidesOf({ ...opts, skippedPath: undefined });
    if (alone !== other) apartWithoutJoin += 1;
  }
  assert.ok(apartWithoutJoin > 0, 'without the duplicate audit the two fall apart for some seed');
});

test('a split needs each candidate to name its source trajectory', async (t) => {
  const dir = await publishDir(t, 'publish-split-bad-');
  const opts = await writeSplitInputs(dir);
  const lines = (await readFile(opts.candidatesPath, 'utf8')).split('\n');
  lines[4] = lines[4]!.replace(/"rollout_index":\d+,/, '');
  await writeFile(opts.candidatesPath, lines.join('\n'));
  await assert.rejects(
    publishPivotDataset(opts),
    /candidates\.jsonl:5: provenance needs source_file, task_index and rollout_index/,
  );
  await publishPivotDataset({ ...opts, validationFraction: 0 });
});
