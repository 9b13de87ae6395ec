import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import {
  buildPivotGymConfig,
  defaultResourcesServerName,
  pivotGymConfigFileName,
  renderPivotGymConfigYaml,
} from '../../gym/gymConfig';
import { fixturesDir } from '../helpers/fixtures';

const configDir = path.join(fixturesDir, 'gym', 'single_step_tool_use_with_argument_comparison');
const fixtureConfigs = readdirSync(configDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => ({
    file: f,
    config: YAML.parse(readFileSync(path.join(configDir, f), 'utf8')) as Record<string, unknown>,
  }));

/** Key paths with the two top-level server names replaced by their role, and list items by `[]`. */
function keyPaths(config: Record<string, unknown>): Set<string> {
  const paths = new Set<string>();
  const walk = (value: unknown, prefix: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, `${prefix}[]`);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      const p = `${prefix}.${key}`;
      paths.add(p);
      walk(child, p);
    }
  };
  for (const [name, block] of Object.entries(config)) {
    const role = Object.keys(block as object)[0]!;
    walk(block, `<${role}>`);
    assert.ok(name.length > 0);
  }
  return paths;
}

const options = {
  agentName: 'demo_pivot_agent',
  datasetName: 'demo_pivots',
  jsonlFpath: '/runs/demo/dataset/pivots.jsonl',
};

test('the generated config has the key paths every fixture config has, and no path none of them has', () => {
  assert.ok(fixtureConfigs.length >= 6);
  const generated = keyPaths(buildPivotGymConfig(options));
  const fixturePaths = fixtureConfigs.map(({ config }) => keyPaths(config));
  const union = new Set(fixturePaths.flatMap((s) => [...s]));
  const common = [...fixturePaths[0]!].filter((p) => fixturePaths.every((s) => s.has(p)));
  for (const p of common) assert.ok(generated.has(p), `missing ${p}`);
  for (const p of generated) assert.ok(union.has(p), `unexpected ${p}`);
});

test('names align: the agent block is the rows agent_ref.name and references the resources server block', () => {
  const config = buildPivotGymConfig({ ...options, modelServerName: 'my_vllm' });
  assert.deepEqual(Object.keys(config), ['demo_pivot_resources_server', 'demo_pivot_agent']);
  const agent = config.demo_pivot_agent!.responses_api_agents!.tool_simulation_agent as Record<string, unknown>;
  assert.deepEqual(agent.resources_server, { type: 'resources_servers', name: 'demo_pivot_resources_server' });
  assert.deepEqual(agent.model_server, { type: 'responses_api_models', name: 'my_vllm' });
  assert.deepEqual(agent.datasets, [
    {
      name: 'demo_pivots',
      type: 'train',
      jsonl_fpath: '/runs/demo/dataset/pivots.jsonl',
      num_repeats: 1,
      license: 'TBD',
    },
  ]);
  const server = config.demo_pivot_resources_server!.resources_servers!
    .single_step_tool_use_with_argument_comparison as Record<string, unknown>;
  assert.equal(server.domain, 'agent');
  assert.equal(server.verified, false);
  assert.equal(server.entrypoint, 'app.py');
});

test('comparator config: the required threshold defaults to 0.1 and caller settings win', () => {
  const byDefault = buildPivotGymConfig(options);
  const server = (c: typeof byDefault) =>
    c.demo_pivot_resources_server!.resources_servers!.single_step_tool_use_with_argument_comparison as Record<
      string,
      unknown
    >;
  assert.deepEqual(server(byDefault).tool_call_comparator_config, { word_count_similarity_threshold: 0.1 });
  const custom = buildPivotGymConfig({
    ...options,
    comparatorConfig: { word_count_similarity_threshold: 0.3, parallel_tool_call_rewarding: true },
  });
  assert.deepEqual(server(custom).tool_call_comparator_config, {
    word_count_similarity_threshold: 0.3,
    parallel_tool_call_rewarding: true,
  });
});

test('the YAML round-trips through the yaml package and is laid out like NeMo Gym configs', () => {
  const config = buildPivotGymConfig({ ...options, resourcesServerName: 'custom_rs', description: 'a: tricky # text' });
  const text = renderPivotGymConfigYaml(config);
  assert.deepEqual(YAML.parse(text), config);
  assert.match(
    text,
    /^custom_rs:\n {2}resources_servers:\n {4}single_step_tool_use_with_argument_comparison:\n {6}entrypoint: app.py\n/,
  );
  assert.match(text, /\n {6}datasets:\n {6}- name: demo_pivots\n/, 'list items flush with their key, as upstream');
  assert.equal(renderPivotGymConfigYaml(config), text, 'deterministic');
});

test('names and file name follow NeMo Gym conventions', () => {
  assert.equal(defaultResourcesServerName('droid_pivot_agent'), 'droid_pivot_resources_server');
  assert.equal(defaultResourcesServerName('my_agent_x'), 'my_agent_x_resources_server');
  assert.equal(pivotGymConfigFileName('droid'), 'droid_single_step_tool_use_with_argument_comparison.yaml');
});

test('bad names are rejected', () => {
  assert.throws(() => buildPivotGymConfig({ ...options, agentName: 'has space' }));
  assert.throws(() => buildPivotGymConfig({ ...options, resourcesServerName: 'demo_pivot_agent' }), /must differ/);
});
