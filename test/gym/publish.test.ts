import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { publishPivotDataset } from '../../gym/publish';
import type { PublishOptions } from '../../gym/publishOptions';
import { validatePivotDataset } from '../../gym/validator';

const tools = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    strict: true,
  },
  {
    type: 'function',
    name: 'book_flight',
    description: 'Book',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
    strict: true,
  },
];

function candidate(
  i: number,
  action: Record<string, unknown>,
  depth: number,
  sourceReward = 1.0,
): Record<string, unknown> {
  return {
    responses_create_params: {
      input: [{ role: 'user', content: `task ${i}: please help` }],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: action,
    agent_ref: { type: 'responses_api_agents', name: 'source_agent' },
    provenance: {
      source_file: 'rollouts.jsonl',
      source_line: i + 1,
      task_index: i,
      rollout_index: 0,
      source_reward: sourceReward,
      pivot_index: 0,
      depth,
      trajectory_length: 3,
      uuid: `uuid-${String(9 - i).padStart(2, '0')}`,
    },
    category: 'synthetic',
  };
}

const call = (name: string, args: Record<string, unknown>) => ({
  type: 'function_call',
  name,
  arguments: JSON.stringify(args),
});

// Candidate i → rewards of its K = 4 local samples (null: no profile row at all).
const plan: [Record<string, unknown>, number, number[] | null, number?][] = [
  [call('get_weather', { city: 'Paris' }), 0, [1, 0, 1, 0]], // 0 mixed 0.5
  [call('get_weather', { city: 'Rome' }), 1, [1, 1, 1, 1]], // 1 all_pass
  [{ type: 'message', content: 'Done.' }, 2, [0, 0, 0, 0]], // 2 all_fail
  [call('book_flight', { to: 'NYC' }), 3, [1, 1, 1, 0]], // 3 mixed 0.75 (easiest: over budget)
  [call('book_flight', { to: 'SFO' }), 5, [1, 0], 4], // 4 incomplete (2 of 4 missing)
  [call('get_weather', { city: 'Oslo' }), 9, null], // 5 incomplete (no profile row)
  [{ type: 'message', content: 'Here you go.' }, 0, [0, 0, 0, 1]], // 6 mixed 0.25
];

function profileRow(taskIndex: number, rewards: number[], expected: number): Record<string, unknown> {
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return {
    _ng_task_index: taskIndex,
    'mean/reward': mean,
    'max/reward': Math.max(...rewards),
    'min/reward': Math.min(...rewards),
    sample: { responses_create_params: { input: [] } },
    num_rollouts: rewards.length,
    expected_num_rollouts: expected,
    missing_num_rollouts: expected - rewards.length,
    reward_profile_completion_pct: (100 * rewards.length) / expected,
    rollout_infos: rewards.map((reward, r) => ({ rollout_id: `${taskIndex}:${r}`, reward })),
  };
}

async function writeInputs(dir: string): Promise<PublishOptions> {
  const candidatesPath = path.join(dir, 'candidates.jsonl');
  const localProfilePath = path.join(dir, 'local_reward_profiling.jsonl');
  const skippedPath = path.join(dir, 'candidates_skipped.jsonl');
  const convertMetricsPath = path.join(dir, 'candidates_metrics.json');
  await writeFile(
    candidatesPath,
    plan.map(([action, depth], i) => `${JSON.stringify(candidate(i, action, depth, i === 6 ? 0.5 : 1.0))}\n`).join(''),
  );
  await writeFile(
    localProfilePath,
    plan
      .map(([, , rewards, expected], i) =>
        rewards ? `${JSON.stringify(profileRow(i, rewards, expected ?? rewards.length))}\n` : '',
      )
      .join(''),
  );
  await writeFile(
    skippedPath,
    ['parallel_tool_calls', 'parallel_tool_calls', 'malformed_trajectory']
      .map((reason) => `${JSON.stringify({ reason, source_line: 1 })}\n`)
      .join(''),
  );
  await writeFile(convertMetricsPath, JSON.stringify({ num_tasks: 5, num_rollouts: 20, num_positive_trajectories: 7 }));
  return {
    candidatesPath,
    localProfilePath,
    skippedPath,
    convertMetricsPath,
    outDir: path.join(dir, 'out'),
    agentName: 'demo_pivot_agent',
    datasetName: 'demo',
    maxPivots: 2,
    jsonlFpath: 'data/demo_pivots.jsonl',
    simulatorLabel: 'seeded policy simulator',
  };
}

async function readJsonlFile(file: string): Promise<Record<string, unknown>[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('publish keeps mixed pivots within budget and writes every artifact', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts = await writeInputs(dir);
  const result = await publishPivotDataset(opts);

  assert.deepEqual(result.counts, {
    candidates: 7,
    skipped: 3,
    all_pass: 1,
    all_fail: 1,
    constant: 0,
    mixed: 3,
    incomplete: 2,
    over_ceiling: 0,
    over_budget: 1,
    over_share: 0,
    published: 2,
    published_partial: 0,
  });
  assert.deepEqual((await readdir(opts.outDir)).sort(), [
    'demo_single_step_tool_use_with_argument_comparison.yaml',
    'pivots.jsonl',
    'pivots_metrics.json',
    'report.html',
    'selection_metrics.json',
  ]);

  const pivots = await readJsonlFile(result.pivotsPath);
  assert.deepEqual(
    pivots.map((p) => (p.provenance as { task_index: number }).task_index),
    [0, 6],
    'candidate order; the 0.75 pivot went over budget',
  );
  for (const p of pivots) {
    assert.deepEqual(Object.keys(p), [
      'responses_create_params',
      'expected_action',
      'agent_ref',
      'provenance',
      'category',
    ]);
    assert.deepEqual(p.agent_ref, { type: 'responses_api_agents', name: 'demo_pivot_agent' });
    assert.equal(p.category, 'synthetic', 'extra fields survive');
  }
  assert.deepEqual(
    pivots.map((p) => {
      const prov = p.provenance as Record<string, unknown>;
      return [prov.local_pass_rate, prov.local_num_samples];
    }),
    [
      [0.5, 4],
      [0.25, 4],
    ],
  );

  const config = YAML.parse(await readFile(result.gymConfigPath, 'utf8'));
  const agent = config.demo_pivot_agent.responses_api_agents.tool_simulation_agent;
  assert.equal(agent.datasets[0].jsonl_fpath, 'data/demo_pivots.jsonl');
  assert.equal(agent.resources_server.name, 'demo_pivot_resources_server');
  assert.ok(config.demo_pivot_resources_server.resources_servers.single_step_tool_use_with_argument_comparison);

  const selection = JSON.parse(await readFile(result.selectionMetricsPath, 'utf8'));
  assert.deepEqual(selection.upstream, {
    tasks: 5,
    rollouts: 20,
    positive_trajectories: 7,
    decision_points: null,
    deduped: null,
  });
  assert.deepEqual(selection.kept, { count: 2, percent: 28.57 });
  assert.deepEqual(selection.skipped_by_reason, {
    parallel_tool_calls: { count: 2, percent: 66.67 },
    malformed_trajectory: { count: 1, percent: 33.33 },
  });
  assert.deepEqual(selection.outcomes.all_pass, { count: 1, percent: 14.29 });
  assert.deepEqual(Object.keys(selection.by_tool_name), ['get_weather', '(message)', 'book_flight']);
  assert.equal(selection.by_tool_name.get_weather.published, 1);
  assert.equal(selection.by_tool_name.book_flight.over_budget, 1);
  assert.deepEqual(Object.keys(selection.by_depth_bucket), ['0', '1', '2-3', '4-7', '8-15']);
  assert.equal(selection.by_depth_bucket['0'].published, 2);
  assert.deepEqual(Object.keys(selection.by_source_reward), ['0.5', '1.0']);
  assert.deepEqual(Object.keys(selection.by_action_type), ['function_call', 'message']);
  assert.deepEqual(
    selection.local_pass_rate_histogram.map((b: { published: number; dropped: number }) => [b.published, b.dropped]),
    // 0.0 all-fail, 0.25 and 0.5 published, 0.75 over budget, 1.0 all-pass; incomplete ones are left out.
    [
      [0, 1],
      [0, 0],
      [1, 0],
      [0, 0],
      [0, 0],
      [1, 0],
      [0, 0],
      [0, 1],
      [0, 0],
      [0, 1],
    ],
  );
  assert.equal(selection.simulator_label, 'seeded policy simulator');

  const metrics = JSON.parse(await readFile(result.datasetMetricsPath, 'utf8'));
  assert.equal(metrics['Number of examples'], 2);
  assert.equal(metrics.jsonl_fpath, 'data/demo_pivots.jsonl');
  assert.deepEqual(metrics.category, { unique_count: 1, total_count: 2 });

  const html = await readFile(result.reportPath, 'utf8');
  assert.match(html, /seeded policy simulator/);
});

test('published pivots pass the NeMo Gym pivot validator port, including the config agent check', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const result = await publishPivotDataset({ ...(await writeInputs(dir)), maxPivots: undefined });
  assert.equal(result.counts.published, 3);
  const validation = await validatePivotDataset({
    path: result.pivotsPath,
    agentRef: 'demo_pivot_agent',
    checkToolNames: true,
    gymConfigPath: result.gymConfigPath,
  });
  assert.equal(validation.exitCode, 0, validation.stderr);
});

test('publishing is deterministic: same inputs, byte-identical files', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts = await writeInputs(dir);
  const snapshot = async (outDir: string) => {
    const files = (await readdir(outDir)).sort();
    return Object.fromEntries(
      await Promise.all(files.map(async (f) => [f, await readFile(path.join(outDir, f), 'utf8')])),
    );
  };
  await publishPivotDataset(opts);
  const first = await snapshot(opts.outDir);
  await publishPivotDataset(opts);
  assert.deepEqual(await snapshot(opts.outDir), first, 'rerun into the same directory');
  const other = path.join(dir, 'other');
  await publishPivotDataset({ ...opts, outDir: other });
  assert.deepEqual(await snapshot(other), first, 'another directory (config path given explicitly)');
});

test('without a budget or skip file every mixed pivot is published and skipped is 0', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts = await writeInputs(dir);
  const result = await publishPivotDataset({
    ...opts,
    maxPivots: undefined,
    skippedPath: undefined,
    allowPartial: true,
  });
  assert.equal(result.counts.skipped, 0);
  assert.equal(result.counts.over_budget, 0);
  assert.equal(result.counts.incomplete, 1, 'the candidate without any profile row stays incomplete');
  assert.equal(result.counts.published, 4, 'the partially profiled mixed pivot is kept');
});

test('bad inputs fail with file, line and reason', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-partial-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts = { ...(await writeInputs(dir)), maxPivots: undefined };
  const partialOf = (rows: Record<string, unknown>[]) =>
    rows
      .filter((r) => (r.provenance as Record<string, unknown>).local_partial === true)
      .map((r) => (r.provenance as Record<string, unknown>).task_index);

  // Candidate 4 has 2 of its 4 samples (rewards 1, 0): mixed on what completed, but incomplete.
  const held = await publishPivotDataset(opts);
  assert.equal(held.counts.incomplete, 2);
  assert.equal(held.counts.published_partial, 0);
  const heldRows = await readJsonlFile(held.pivotsPath);
  assert.deepEqual(
    heldRows.map((r) => (r.provenance as Record<string, unknown>).task_index),
    [0, 3, 6],
  );
  assert.deepEqual(partialOf(heldRows), []);

  const allowed = await publishPivotDataset({ ...opts, outDir: path.join(dir, 'allowed'), allowPartial: true });
  assert.equal(allowed.counts.incomplete, 1, 'the candidate without any sample stays incomplete');
  assert.equal(allowed.counts.published_partial, 1);
  const rows = await readJsonlFile(allowed.pivotsPath);
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-split-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const opts = await writeSplitInputs(dir);
  const result = await publishPivotDataset(opts);
  assert.ok(result.validationPivotsPath);
  const train = await readJsonlFile(result.pivotsPath);
  const validation = await readJsonlFile(result.validationPivotsPath);
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-split-order-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sides = async (sub: string, order?: (rows: number[]) => number[], seed = 3) => {
    const opts = await writeSplitInputs(await mkdtemp(path.join(dir, sub)), order);
    const result = await publishPivotDataset({ ...opts, validationSeed: seed });
    const uuids = async (file: string) =>
      (await readJsonlFile(file)).map((r) => (r.provenance as { uuid: string }).uuid).sort();
    return { train: await uuids(result.pivotsPath), validation: await uuids(result.validationPivotsPath!) };
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-split-join-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const sidesOf = async (opts: PublishOptions) => {
    const result = await publishPivotDataset(opts);
    const sideOf = new Map<string, string>();
    for (const [side, file] of [
      ['train', result.pivotsPath],
      ['validation', result.validationPivotsPath!],
    ] as const)
      for (const row of await readJsonlFile(file)) sideOf.set(trajectoryOf(row), side);
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
  const dir = await mkdtemp(path.join(tmpdir(), 'publish-split-bad-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
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
