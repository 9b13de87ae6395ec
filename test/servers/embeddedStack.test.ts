import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { startAgentServer } from '../../servers/agent';
import { EMBEDDED_AGENT_NAME, startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';

const demoRows = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map(
    (line) =>
      JSON.parse(line) as Record<string, unknown> & {
        task_id: string;
        responses_create_params: Record<string, unknown>;
      },
  );

const withSeed = (row: (typeof demoRows)[number], seed: number) => ({
  ...row,
  agent_ref: { type: 'responses_api_agents', name: EMBEDDED_AGENT_NAME },
  responses_create_params: { ...row.responses_create_params, metadata: { extra_body: JSON.stringify({ seed }) } },
});

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

let stack: EmbeddedStack;
let other: EmbeddedStack;
const logLines: string[] = [];

before(async () => {
  stack = await startEmbeddedStack({ seed: 7, log: (l) => logLines.push(l) });
  other = await startEmbeddedStack({ seed: 8, log: () => undefined });
});
after(async () => {
  await stack.close();
  await other.close();
});

test('the model server announces itself as a simulated policy', () => {
  assert.match(logLines.join('\n'), /SIMULATED policy/);
});

test('GET /v1/models lists the simulated policy', async () => {
  const res = await fetch(`${stack.urls.model}/v1/models`);
  const json = (await res.json()) as any;
  assert.equal(res.status, 200);
  assert.equal(json.data[0].id, 'pivot-miner-simulated-policy');
});

test('POST /v1/responses returns a Responses object with a correct first call', async () => {
  const row = demoRows.find((r) => r.task_id === 'weather_paris')!;
  const { status, json } = await post(`${stack.urls.model}/v1/responses`, row.responses_create_params);
  assert.equal(status, 200);
  assert.equal(json.object, 'response');
  assert.match(json.model, /simulated/);
  const call = json.output.find((i: any) => i.type === 'function_call');
  assert.equal(call.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
  assert.equal(call.status, 'completed');
});

test('POST /v1/chat/completions answers in chat form with the same decision as /v1/responses', async () => {
  const row = demoRows.find((r) => r.task_id === 'weather_paris')!;
  const chat = await post(`${stack.urls.model}/v1/chat/completions`, {
    model: 'x',
    messages: (row.responses_create_params.input as any[]).map((m) => ({ role: m.role, content: m.content })),
    tools: (row.responses_create_params.tools as any[]).map(({ type, ...fn }) => ({ type, function: fn })),
  });
  assert.equal(chat.status, 200);
  assert.equal(chat.json.object, 'chat.completion');
  const message = chat.json.choices[0].message;
  assert.equal(chat.json.choices[0].finish_reason, 'tool_calls');
  assert.equal(message.tool_calls[0].function.name, 'get_weather');
  assert.equal(typeof message.reasoning_content, 'string');
  const responses = await post(`${stack.urls.model}/v1/responses`, { ...row.responses_create_params, model: 'x' });
  const call = responses.json.output.find((i: any) => i.type === 'function_call');
  assert.equal(message.tool_calls[0].id, call.call_id);
});

test('bad bodies get 422 (or 400 for broken JSON) and the servers keep serving', async () => {
  const bad = [
    await post(`${stack.urls.model}/v1/responses`, { tools: [] }),
    await post(`${stack.urls.model}/v1/responses`, { input: [42] }),
    await post(`${stack.urls.model}/v1/chat/completions`, { messages: [] }),
    await post(`${stack.urls.resources}/get_weather`, { town: 'Paris' }),
    await post(`${stack.urls.resources}/verify`, { responses_create_params: { input: [] } }),
    await post(`${stack.urls.agent}/run`, { nope: true }),
  ];
  for (const r of bad) {
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(typeof r.json.error, 'string');
  }
  assert.equal((await post(`${stack.urls.model}/v1/responses`, '{not json')).status, 400);
  assert.equal((await post(`${stack.urls.resources}/no_such_tool`, {})).status, 404);
  const ok = await post(`${stack.urls.model}/v1/responses`, { input: 'What is the weather like in Rome right now?' });
  assert.equal(ok.status, 200);
});

test('resources server runs tools deterministically and reports domain errors as results', async () => {
  const a = await post(`${stack.urls.resources}/get_weather`, { city: 'paris' });
  assert.deepEqual(a.json, { city: 'Paris', temperature_c: 18, condition: 'cloudy' });
  const b = await post(`${stack.urls.resources}/convert_temperature`, { value: 18, from_unit: 'C', to_unit: 'F' });
  assert.deepEqual(b.json, { value: 64.4, unit: 'F' });
  const c = await post(`${stack.urls.resources}/find_city_by_landmark`, { landmark: 'Atlantis' });
  assert.equal(c.status, 200);
  assert.match(c.json.error, /unknown landmark/);
});

test('/verify scores right and wrong trajectories from the row ground truth', async () => {
  const row = demoRows.find((r) => r.task_id === 'weather_paris')!;
  const call = {
    type: 'function_call',
    call_id: 'c1',
    name: 'get_weather',
    arguments: '{"city":"Paris"}',
    status: 'completed',
  };
  const out = {
    type: 'function_call_output',
    call_id: 'c1',
    output: '{"city":"Paris","temperature_c":18,"condition":"cloudy"}',
  };
  const answer = (text: string) => ({
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  });
  const good = await post(`${stack.urls.resources}/verify`, {
    ...row,
    response: { output: [call, out, answer('It is cloudy in Paris.')] },
  });
  assert.equal(good.json.reward, 1.0);
  assert.equal(good.json.task_id, 'weather_paris');
  const wrongAnswer = await post(`${stack.urls.resources}/verify`, {
    ...row,
    response: { output: [call, out, answer('It is sunny in Paris.')] },
  });
  assert.equal(wrongAnswer.json.reward, 0.0);
  const noCall = await post(`${stack.urls.resources}/verify`, {
    ...row,
    response: { output: [answer('It is cloudy in Paris.')] },
  });
  assert.equal(noCall.json.reward, 0.0);
  assert.equal(noCall.json.tool_calls_correct, false);
});

test('GET /global_config_dict_yaml maps server names to host and port', async () => {
  const res = await fetch(`${stack.urls.head}/global_config_dict_yaml`);
  const config = YAML.parse(JSON.parse(await res.text()) as string);
  const agent = config[EMBEDDED_AGENT_NAME].responses_api_agents.simple_agent;
  assert.equal(`http://${agent.host}:${agent.port}`, stack.urls.agent);
  assert.equal(agent.model_server.name, stack.names.model);
  const model = Object.values(config[stack.names.model].responses_api_models)[0] as any;
  assert.equal(`http://${model.host}:${model.port}`, stack.urls.model);
  const resources = Object.values(config[stack.names.resources].resources_servers)[0] as any;
  assert.equal(`http://${resources.host}:${resources.port}`, stack.urls.resources);
  assert.equal(`http://${config.head_server.host}:${config.head_server.port}`, stack.urls.head);
});

test('POST /run returns the verified rollout with the whole trajectory, deterministically', async () => {
  const row = withSeed(
    demoRows.find((r) => r.task_id === 'landmark_temperature_eiffel_f')!,
    0,
  );
  const first = await post(`${stack.urls.agent}/run`, row);
  assert.equal(first.status, 200);
  assert.equal(first.json.task_id, row.task_id);
  assert.deepEqual(first.json.agent_ref, row.agent_ref);
  const types = first.json.response.output.map((i: any) => i.type);
  assert.ok(types.includes('function_call') && types.includes('function_call_output'));
  assert.equal(types.at(-1), 'message');
  assert.equal(typeof first.json.reward, 'number');
  const again = await post(`${stack.urls.agent}/run`, row);
  assert.equal(JSON.stringify(again.json), JSON.stringify(first.json));
});

test('different simulator seeds give different rollouts', async () => {
  const rows = demoRows.slice(0, 8).map((r) => withSeed(r, 0));
  const a = await Promise.all(rows.map((r) => post(`${stack.urls.agent}/run`, r)));
  const b = await Promise.all(rows.map((r) => post(`${other.urls.agent}/run`, r)));
  assert.notEqual(JSON.stringify(a.map((r) => r.json)), JSON.stringify(b.map((r) => r.json)));
});

test('an unreachable model server is a 502 from the agent', async () => {
  const agent = await startAgentServer({
    modelUrl: 'http://127.0.0.1:9',
    resourcesUrl: stack.urls.resources,
    requestTimeoutMs: 2000,
  });
  try {
    const res = await post(`${agent.url}/run`, withSeed(demoRows[0], 0));
    assert.equal(res.status, 502);
    assert.match(res.json.error, /model server/);
  } finally {
    await agent.close();
  }
});

test('per-task success over seeds 0..3 spans all-fail, mixed and all-pass', async () => {
  const table = await Promise.all(
    demoRows.map(async (row) => {
      const rewards = await Promise.all(
        [0, 1, 2, 3].map(
          async (seed) => (await post(`${stack.urls.agent}/run`, withSeed(row, seed))).json.reward as number,
        ),
      );
      return { task: row.task_id, successes: rewards.filter((r) => r === 1).length };
    }),
  );
  const kinds = new Set(table.map((t) => (t.successes === 0 ? 'all-fail' : t.successes === 4 ? 'all-pass' : 'mixed')));
  assert.deepEqual([...kinds].sort(), ['all-fail', 'all-pass', 'mixed'], JSON.stringify(table));
});
