import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { jsonText } from '../../gym/jsonl';
import { parseKinded } from '../../gym/kindedJson';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';
import { startAgentServer } from '../../servers/agent';
import type { RunningServer } from '../../servers/http';
import { startResourcesServer } from '../../servers/resources';

// The embedded agent and resources server answer POST /aggregate_metrics as NeMo Gym 0.7.0's do: the
// resources server computes (SimpleResourcesServer.aggregate_metrics), the agent proxies to it
// (simple_agent's aggregate_metrics), so `ng_aggregate_rollouts` can be pointed at them.

let resources: RunningServer;
let agent: RunningServer;
let python070: string;

before(async () => {
  // Provisioning blocks; it runs before any server shares the event loop.
  python070 = path.join(ensureNemoGym('0.7.0').binDir, 'python');
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

/**
 * 0.7.0's own compute_aggregate_metrics on the same verify responses, each field as orjson writes it.
 * Run without blocking: the servers share this event loop, and a loop stalled past their keep-alive
 * timeout lets a pooled socket close just as the next test's fetch reuses it ("fetch failed").
 */
async function answer070(responses: unknown[]): Promise<Record<string, string>> {
  const script =
    'import json, sys\nfrom nemo_gym.reward_profile import compute_aggregate_metrics\n' +
    'print(compute_aggregate_metrics(json.loads(sys.stdin.read())).model_dump_json(exclude_none=True))';
  const child = promisify(execFile)(python070, ['-c', script], { encoding: 'utf8' });
  child.child.stdin!.end(JSON.stringify(responses));
  return fieldTexts((await child).stdout);
}

/** Each field of an answer as orjson writes it, so a float that looks integral (`1.0`) stays one. */
function fieldTexts(text: string): Record<string, string> {
  const { plain, kinded } = parseKinded(text);
  const fields = kinded instanceof Map ? [...kinded] : Object.entries(plain as Record<string, unknown>);
  return Object.fromEntries(fields.map(([k, v]) => [k, jsonText(v)]));
}

test('the resources server answers what 0.7.0’s compute_aggregate_metrics answers', { timeout: 900_000 }, async () => {
  const text = async (responses: unknown[]) =>
    (
      await fetch(new URL('/aggregate_metrics', resources.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ verify_responses: responses }),
      })
    ).text();
  const ours = fieldTexts(await text(verifyResponses));
  assert.deepEqual(ours, await answer070(verifyResponses));
  assert.match(ours.agent_metrics!, /"max\/reward":1\.0/, 'a float that looks integral stays a float');
  assert.match(ours.agent_metrics!, /"mean_across_repeats\/mean\/reward"/, "0.7.0's additions are there");
  assert.deepEqual(fieldTexts(await text([])), await answer070([]));
});

test('the agent proxies /aggregate_metrics to its resources server', async () => {
  const direct = await post(resources.url, '/aggregate_metrics', { verify_responses: verifyResponses });
  const proxied = await post(agent.url, '/aggregate_metrics', { verify_responses: verifyResponses });
  assert.equal(proxied.status, 200);
  assert.deepEqual(proxied.json, direct.json);
});

test('malformed requests', async () => {
  assert.equal((await post(agent.url, '/aggregate_metrics', { responses: [] })).status, 422);
  assert.equal((await post(resources.url, '/aggregate_metrics', { verify_responses: [1] })).status, 422);
});
