import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { stepRewardCategoryText, type ToolCallComparatorConfigInput } from '../../gym/verifier';
import { createVerifierServer, loadVerifierConfigFromGymYaml } from '../../servers/verifierServer';
import { fixturesDir } from '../helpers/fixtures';

const gymDir = path.join(fixturesDir, 'gym/single_step_tool_use_with_argument_comparison');

function readYaml(name: string): string {
  return fs.readFileSync(path.join(gymDir, name), 'utf8');
}

function readJsonl(file: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function listen(config: ToolCallComparatorConfigInput): Promise<{ server: http.Server; url: string }> {
  const server = createVerifierServer(config);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

test('loads tool_call_comparator_config from every NeMo Gym fixture config', () => {
  const defaults = {
    floating_point_comparison_threshold: 1e-6,
    parallel_tool_call_rewarding: false,
    allow_subset: false,
    allow_superset: false,
    parallel_tool_call_reward_mode: 'binary_strict',
  };
  assert.deepEqual(loadVerifierConfigFromGymYaml(readYaml('single_step_tool_use_with_argument_comparison.yaml')), {
    word_count_similarity_threshold: 0.1,
    ...defaults,
  });
  assert.deepEqual(
    loadVerifierConfigFromGymYaml(readYaml('swe_pivot_single_step_tool_use_with_argument_comparison.yaml')),
    {
      word_count_similarity_threshold: 0,
      ...defaults,
    },
  );
  assert.deepEqual(
    loadVerifierConfigFromGymYaml(readYaml('parallel_tool_calls_single_step_tool_use_with_argument_comparison.yaml')),
    {
      ...defaults,
      word_count_similarity_threshold: 0.1,
      parallel_tool_call_rewarding: true,
      allow_subset: true,
      allow_superset: true,
      parallel_tool_call_reward_mode: 'f1',
    },
  );
  const search = readYaml('search_pivot_single_step_tool_use_with_argument_comparison.yaml');
  assert.equal(loadVerifierConfigFromGymYaml(search).word_count_similarity_threshold, 0.3);
});

test('config loading names what is wrong', () => {
  const both = `${readYaml('single_step_tool_use_with_argument_comparison.yaml')}\n${readYaml('swe_pivot_single_step_tool_use_with_argument_comparison.yaml')}`;
  assert.throws(
    () => loadVerifierConfigFromGymYaml(both),
    /several: .*single_step_tool_use_with_argument_comparison_resources_server/,
  );
  assert.equal(
    loadVerifierConfigFromGymYaml(both, 'swe_pivot_single_step_tool_use_with_argument_comparison_resources_server')
      .word_count_similarity_threshold,
    0,
  );
  assert.throws(() => loadVerifierConfigFromGymYaml(both, 'nope'), /named "nope"/);
  const broken = readYaml('single_step_tool_use_with_argument_comparison.yaml').replace(
    'word_count_similarity_threshold: 0.1',
    'floating_point_comparison_threshold: 0.1',
  );
  assert.throws(
    () => loadVerifierConfigFromGymYaml(broken),
    /tool_call_comparator_config: word_count_similarity_threshold/,
  );
  assert.throws(() => loadVerifierConfigFromGymYaml('a: 1'), /found none/);
});

let main: { server: http.Server; url: string };
before(async () => {
  main = await listen(loadVerifierConfigFromGymYaml(readYaml('single_step_tool_use_with_argument_comparison.yaml')));
});
after(async () => {
  await close(main.server);
});

test('POST /verify reproduces the rewards and categories of the NeMo Gym example rollouts', async () => {
  const rollouts = readJsonl(path.join(gymDir, 'example_rollouts.jsonl'));
  assert.equal(rollouts.length, 5);
  for (const rollout of rollouts) {
    const body = {
      responses_create_params: rollout.responses_create_params,
      expected_action: rollout.expected_action,
      response: rollout.response,
      extra_row_field: 'dropped like NeMo Gym does',
    };
    const { status, json } = await post(`${main.url}/verify`, body);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(json), [
      'responses_create_params',
      'response',
      'reward',
      'expected_action',
      'category',
    ]);
    assert.equal(json.reward, rollout.reward);
    assert.equal(json.category, rollout.category);
    assert.deepEqual(json.expected_action, rollout.expected_action);
    assert.deepEqual(json.responses_create_params, rollout.responses_create_params);
  }
});

test('POST /verify scores the parallel example rows under the parallel config', async () => {
  const parallel = await listen(
    loadVerifierConfigFromGymYaml(readYaml('parallel_tool_calls_single_step_tool_use_with_argument_comparison.yaml')),
  );
  try {
    for (const row of readJsonl(path.join(gymDir, 'parallel_example.jsonl'))) {
      const action = row.expected_action as { type: string; calls?: Array<{ name: string; arguments: string }> };
      if (action.type !== 'function_call_batch' || !action.calls) continue;
      const output = [...action.calls]
        .reverse()
        .map((c, i) => ({ type: 'function_call', call_id: `call_${i}`, name: c.name, arguments: c.arguments }));
      const full = await post(`${parallel.url}/verify`, { ...row, response: { output } });
      assert.equal(full.status, 200);
      assert.equal(full.json.reward, 1);
      assert.equal(full.json.category, stepRewardCategoryText.EXPECTED_TOOL_CALL_BATCH);
      const half = await post(`${parallel.url}/verify`, { ...row, response: { output: output.slice(0, 1) } });
      assert.equal(half.json.reward, 2 / (action.calls.length + 1));
      assert.equal(half.json.category, stepRewardCategoryText.FUNCTION_CALL_BATCH_LENGTH_DIFFERENT);
    }
  } finally {
    await close(parallel.server);
  }
});

test('POST /verify agrees with verifier vectors', async () => {
  const seen = new Set<string>();
  const vectors = readJsonl(path.join(fixturesDir, 'verifier/vectors.jsonl')).filter((vector) => {
    const family = String(vector.family);
    if (seen.has(family)) return false;
    seen.add(family);
    return true;
  });
  assert.equal(vectors.length, 12);
  for (const vector of vectors) {
    const { server, url } = await listen(vector.config as ToolCallComparatorConfigInput);
    try {
      const { status, json } = await post(`${url}/verify`, {
        responses_create_params: { input: 'hi' },
        expected_action: vector.expected_action,
        response: vector.response,
      });
      assert.equal(status, 200, String(vector.id));
      assert.equal(json.reward, vector.reward, String(vector.id));
      assert.equal(json.category, vector.category_text, String(vector.id));
    } finally {
      await close(server);
    }
  }
});

test('bad bodies get 422 naming the problem, and the server keeps serving', async () => {
  const good = {
    responses_create_params: { input: [] },
    expected_action: { type: 'function_call', name: 'f', arguments: '{"a": 1}' },
    response: { output: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{"a": 1}' }] },
  };
  const notJson = await post(`${main.url}/verify`, '{"responses_create_params":');
  assert.equal(notJson.status, 422);
  assert.match(notJson.json.detail[0].msg, /not JSON/);

  const { expected_action: _dropped, ...missing } = good;
  const noAction = await post(`${main.url}/verify`, missing);
  assert.equal(noAction.status, 422);
  assert.deepEqual(noAction.json.detail[0].loc, ['body', 'expected_action']);

  const badItem = await post(`${main.url}/verify`, {
    ...good,
    response: { output: [{ type: 'function_call', name: 'f' }] },
  });
  assert.equal(badItem.status, 422);
  assert.deepEqual(badItem.json.detail[0].loc, ['body', 'response', 'output', 0, 'arguments']);

  const badKind = await post(`${main.url}/verify`, { ...good, expected_action: { type: 'shell', content: 'x' } });
  assert.equal(badKind.status, 422);
  assert.deepEqual(badKind.json.detail[0].loc, ['body', 'expected_action', 'type']);

  const brokenRow = await post(`${main.url}/verify`, {
    ...good,
    expected_action: { ...good.expected_action, arguments: '{' },
  });
  assert.equal(brokenRow.status, 422);
  assert.match(brokenRow.json.detail[0].msg, /expected_action arguments of tool "f"/);

  const ok = await post(`${main.url}/verify`, good);
  assert.equal(ok.status, 200);
  assert.equal(ok.json.reward, 1);
  assert.equal(ok.json.category, stepRewardCategoryText.EXPECTED_TOOL_CALL);
});

test('other routes: seed_session is a no-op, unknown paths and methods are refused', async () => {
  const seeded = await post(`${main.url}/seed_session`, {});
  assert.equal(seeded.status, 200);
  assert.deepEqual(seeded.json, {});
  assert.equal((await post(`${main.url}/nope`, {})).status, 404);
  assert.equal((await fetch(`${main.url}/verify`)).status, 405);
});
