import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { publishPivotDataset } from '../../gym/publish';
import { validatePivotDataset } from '../../gym/validator';
import { readJsonlSync } from '../helpers/jsonl';
import { publishDir, writeInputs } from './publishFixtures';

test('publish keeps mixed pivots within budget and writes every artifact', async (t) => {
  const dir = await publishDir(t, 'publish-');
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

  const pivots = readJsonlSync(result.pivotsPath);
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
  const dir = await publishDir(t, 'publish-');
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
  const dir = await publishDir(t, 'publish-');
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
  const dir = await publishDir(t, 'publish-');
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
