import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chatCompletionToResponse, responsesRequestToChat } from '../../gym/chatCompletions';
import { orjsonDumps } from '../../gym/pythonJsonDumps';
import type { RunningServer } from '../../servers/http';
import { startPolicyModelServer } from '../../servers/policyModel';

type Item = Record<string, any>;

const weatherRow = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Item)
  .find((row) => row.task_id === 'weather_paris')!;

let server: RunningServer;
before(async () => {
  server = await startPolicyModelServer({ seed: 11, log: () => undefined });
});
after(async () => server.close());

async function post(route: string, body: unknown): Promise<{ status: number; json: Item }> {
  const res = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Item };
}

/** What a model decided, without what Chat Completions has no place for (item ids and statuses). */
const decision = (items: Item[]) =>
  items.map((i) => ({
    type: i.type,
    reasoning: i.summary?.map((s: Item) => s.text),
    text: i.content?.map((c: Item) => c.text).join(''),
    call: i.type === 'function_call' ? [i.call_id, i.name, i.arguments] : undefined,
  }));

// What the single-step executor sends a chat engine, answered by the chat route and read back, must
// give the decision the Responses route gives: one conversion serves both sides.
test('the chat route, reached the way the executor reaches engines, decides as /v1/responses does', async () => {
  let params: Item = { ...weatherRow.responses_create_params, metadata: { extra_body: JSON.stringify({ seed: 3 }) } };
  for (let turn = 0; turn < 2; turn++) {
    const viaResponses = await post('/v1/responses', params);
    const chatBody = JSON.parse(orjsonDumps(responsesRequestToChat(params)));
    assert.equal(chatBody.seed, 3);
    const viaChat = await post('/v1/chat/completions', chatBody);
    assert.equal(viaResponses.status, 200);
    assert.equal(viaChat.status, 200);

    const message = viaChat.json.choices[0].message;
    assert.equal(typeof message.reasoning_content, 'string', 'reasoning answered in the reasoning-parser form');
    assert.equal(message.reasoning, message.reasoning_content);
    assert.doesNotMatch(String(message.content), /<think>/);
    assert.deepEqual(viaChat.json.usage, {
      prompt_tokens: viaResponses.json.usage.input_tokens,
      completion_tokens: viaResponses.json.usage.output_tokens,
      total_tokens: viaResponses.json.usage.total_tokens,
    });
    const readBack = chatCompletionToResponse(viaChat.json);
    assert.deepEqual(decision(readBack.output as Item[]), decision(viaResponses.json.output), `turn ${turn}`);

    // The second turn carries this turn's reasoning and call in its prefix, so the chat route has to
    // read reasoning back out of the engine-form history for the draws to agree.
    if (turn === 1) break;
    const call = viaResponses.json.output.find((i: Item) => i.type === 'function_call');
    assert.ok(call, 'the simulated policy calls a tool first');
    params = {
      ...params,
      input: [
        ...params.input,
        ...viaResponses.json.output,
        { type: 'function_call_output', call_id: call.call_id, output: '{"city": "Paris"}' },
      ],
    };
  }
});

test('a chat request the conversion cannot read is a 422 naming the message', async () => {
  const res = await post('/v1/chat/completions', {
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ],
  });
  assert.equal(res.status, 422);
  assert.match(res.json.error, /message 1: tool call 0 has no id/);
});
