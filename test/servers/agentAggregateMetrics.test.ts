import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { computeAggregateMetrics } from '../../gym/aggregateMetrics';
import { startAgentServer } from '../../servers/agent';
import type { RunningServer } from '../../servers/http';
import { startResourcesServer } from '../../servers/resources';

// The embedded agent and resources server answer POST /aggregate_metrics as NeMo Gym's do: the
// resources server computes (SimpleResourcesServer.aggregate_metrics), the agent proxies to it
// (simple_agent's aggregate_metrics), so `ng_aggregate_rollouts` can be pointed at them.

let resources: RunningServer;
let agent: RunningServer;

before(async () => {
  resources = await startResourcesServer();
  // The model is never called by /aggregate_metrics.
  agent = await startAgentServer({ modelUrl: 'http://127.0.0.1:9', resourcesUrl: resources.url });
});

after(async () => {
  await Promise.all([agent.close(), resources.close()]);
});

const verifyResponses = [
  {
    _ng_task_index: 0,
    _ng_rollout_index: 0,
    reward: 1.0,
    answer_correct: true,
    response: { usage: { input_tokens: 10 } },
  },
  {
    _ng_task_index: 0,
    _ng_rollout_index: 1,
    reward: 0.0,
    answer_correct: false,
    response: { usage: { input_tokens: 12 } },
  },
  { _ng_task_index: 1, _ng_rollout_index: 0, reward: 1.0, answer_correct: true },
];

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

test('the resources server computes the default aggregate metrics', async () => {
  const { status, json } = await post(resources.url, '/aggregate_metrics', { verify_responses: verifyResponses });
  assert.equal(status, 200);
  assert.deepEqual(json, JSON.parse(JSON.stringify(computeAggregateMetrics(verifyResponses))));
  assert.equal(json.agent_metrics['mean/reward'], 2 / 3);
  assert.deepEqual(json.key_metrics, { 'mean/reward': 2 / 3, 'mean/answer_correct': 2 / 3, 'mean/input_tokens': 11 });
});

test('the agent proxies /aggregate_metrics to its resources server', async () => {
  const direct = await post(resources.url, '/aggregate_metrics', { verify_responses: verifyResponses });
  const proxied = await post(agent.url, '/aggregate_metrics', { verify_responses: verifyResponses });
  assert.equal(proxied.status, 200);
  assert.deepEqual(proxied.json, direct.json);
});

test('empty and malformed requests', async () => {
  assert.deepEqual((await post(agent.url, '/aggregate_metrics', { verify_responses: [] })).json, {
    group_level_metrics: [],
    agent_metrics: {},
    key_metrics: {},
  });
  assert.equal((await post(agent.url, '/aggregate_metrics', { responses: [] })).status, 422);
  assert.equal((await post(resources.url, '/aggregate_metrics', { verify_responses: [1] })).status, 422);
});
