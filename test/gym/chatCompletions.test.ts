import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chatMessageToResponsesOutput,
  chatRequestToResponses,
  responsesItemsToChatMessages,
  responsesOutputToChatMessage,
  responsesRequestToChat,
} from '../../gym/chatCompletions';
import { fixturesDir } from '../fixtures';

type Item = Record<string, any>;
const chatDir = path.join(fixturesDir, 'gym/chat');

test('NeMo Gym vLLM round-trip fixture: Responses items → chat messages with <think> reasoning', () => {
  const data = JSON.parse(readFileSync(path.join(chatDir, 'gym_vllm_round_trip_test_data.json'), 'utf8'));
  const input = [{ role: 'system', content: 'system' }, { role: 'user', content: 'hello!' }, ...data.input.output];
  const messages = responsesItemsToChatMessages(input, { reasoning: 'think_tags' });
  assert.deepEqual(JSON.parse(JSON.stringify(messages)), data.expected_output.messages);
});

test('derived chat fixtures: every rollout converts to the same grouped messages', () => {
  const files = readdirSync(chatDir).filter((f) => f.endsWith('.jsonl') && f !== 'aviary.jsonl');
  assert.ok(files.length >= 6);
  for (const file of files) {
    const env = file.replace(/\.jsonl$/, '');
    const rollouts = readFileSync(path.join(fixturesDir, 'gym', env, 'example_rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const derived = readFileSync(path.join(chatDir, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    rollouts.forEach((rollout, i) => {
      const messages = responsesItemsToChatMessages([...rollout.responses_create_params.input, ...rollout.response.output]);
      assert.deepEqual(JSON.parse(JSON.stringify(messages)), derived[i].messages, `${file} line ${i + 1}`);
      const request = responsesRequestToChat(rollout.responses_create_params);
      assert.deepEqual(request.tools, derived[i].tools, `${file} line ${i + 1} tools`);
    });
  }
});

test('chat → Responses → chat is the identity on a tool-using conversation', () => {
  const chat: Item = {
    model: 'm',
    seed: 3,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object', properties: {} } } }],
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'look it up',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"condition":"cloudy"}' },
      { role: 'assistant', content: 'It is cloudy.' },
    ],
  };
  const responses = chatRequestToResponses(chat);
  assert.deepEqual(responses.tools, [{ type: 'function', name: 'get_weather', description: 'd', parameters: { type: 'object', properties: {} } }]);
  assert.deepEqual(responses.tool_choice, { type: 'function', name: 'get_weather' });
  assert.deepEqual(
    (responses.input as Item[]).map((i) => i.type),
    ['message', 'message', 'reasoning', 'function_call', 'function_call_output', 'message'],
  );
  assert.deepEqual(responsesRequestToChat(responses), chat);
});

test('one model turn ⇄ one assistant message, in both reasoning formats', () => {
  const turn = [
    { type: 'reasoning', id: 'rs_x', summary: [{ type: 'summary_text', text: 'think' }] },
    { type: 'message', id: 'msg_x', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
    { type: 'function_call', id: 'c9', call_id: 'c9', name: 'f', arguments: '{}', status: 'completed' },
  ];
  const viaContent = responsesOutputToChatMessage(turn);
  assert.deepEqual(viaContent, {
    role: 'assistant',
    content: 'Checking.',
    reasoning_content: 'think',
    tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{}' } }],
  });
  assert.deepEqual(chatMessageToResponsesOutput(viaContent as unknown as Item, { idSuffix: 'x' }), turn);
  const viaThink = responsesOutputToChatMessage(turn, { reasoning: 'think_tags' });
  assert.equal(viaThink.content, '<think>think</think>Checking.');
  assert.deepEqual(chatMessageToResponsesOutput(viaThink as unknown as Item, { idSuffix: 'x' }), turn);
});

test('a reasoning-only chat turn with <think> content yields only a reasoning item', () => {
  const items = chatMessageToResponsesOutput({ role: 'assistant', content: '<think>hmm</think>' });
  assert.deepEqual(items, [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'hmm' }] }]);
});
