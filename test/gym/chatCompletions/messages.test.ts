import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChatConversionError,
  responsesItemsToChatMessages,
  responsesOutputToChatMessage,
  withParsedReasoning,
} from '../../../gym/chatCompletions';
import { fixturesDir } from '../../helpers/fixtures';

// Responses items → chat messages, as NeMo Gym's vllm_model builds them; messagesToResponses.test.ts
// has the way back.

type Item = Record<string, any>;
const chatDir = path.join(fixturesDir, 'gym/chat');
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

// An assistant message without calls has no `tool_calls` key, as in NeMo Gym after
// NVIDIA-NeMo/Gym#2515 (OpenAI refuses `tool_calls: []`). NeMo Gym 0.4.0 sent the empty list: the
// copy of the round-trip data in its 0.4.0 wheel has it, and that key is the one difference from it.
const withEmptyToolCalls = (messages: Item[]) =>
  messages.map((m) => (m.role === 'assistant' && !m.tool_calls ? { ...m, tool_calls: [] } : m));

test('NeMo Gym round-trip fixture: Responses items → chat messages with <think> reasoning', () => {
  const data = JSON.parse(readFileSync(path.join(chatDir, 'gym_vllm_round_trip_test_data.json'), 'utf8'));
  const input = [{ role: 'system', content: 'system' }, { role: 'user', content: 'hello!' }, ...data.input.output];
  const messages = plain(responsesItemsToChatMessages(input));
  assert.deepEqual(messages, data.expected_output.messages);
  const withoutCalls = messages.filter((m: Item) => m.role === 'assistant' && !('tool_calls' in m));
  assert.ok(withoutCalls.length > 0, 'the fixture has an assistant turn without calls');
  // NeMo Gym 0.4.0's output for the same items: the same messages with `tool_calls: []` added.
  assert.notDeepEqual(withEmptyToolCalls(messages), messages);
});

test('no assistant message carries an empty tool_calls list (NVIDIA-NeMo/Gym#2515)', () => {
  const messages = plain(
    responsesItemsToChatMessages([
      { role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.', annotations: [] }] },
      { role: 'user', content: 'call f' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    ]),
  );
  assert.deepEqual(messages, [
    { content: 'hi', role: 'user' },
    { role: 'assistant', content: 'Hello.' },
    { content: 'call f', role: 'user' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', function: { arguments: '{}', name: 'f' }, type: 'function' }],
    },
  ]);
  assert.equal(JSON.stringify(messages).includes('"tool_calls":[]'), false);
  assert.deepEqual(plain(responsesOutputToChatMessage([])), { role: 'assistant', content: null });
});

test('derived chat fixtures: every rollout groups into the same messages, reasoning as <think>', () => {
  const files = readdirSync(chatDir).filter((f) => f.endsWith('.jsonl') && f !== 'aviary.jsonl');
  assert.ok(files.length >= 6);
  // The derived files carry reasoning as `reasoning_content` (fixtures/gym/README.md); NeMo Gym puts
  // the same text in front of the turn's content as a <think> block.
  const asThink = (m: Item): Item => {
    if (m.role !== 'assistant') return m;
    const { reasoning_content: reasoning, ...rest } = m;
    return reasoning === undefined ? rest : { ...rest, content: `<think>${reasoning}</think>${rest.content ?? ''}` };
  };
  let thinkTurns = 0;
  for (const file of files) {
    const env = file.replace(/\.jsonl$/, '');
    const rollouts = readFileSync(path.join(fixturesDir, 'gym', env, 'example_rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const derived = readFileSync(path.join(chatDir, file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    rollouts.forEach((rollout, i) => {
      const messages = responsesItemsToChatMessages([
        ...rollout.responses_create_params.input,
        ...rollout.response.output,
      ]);
      const expected = derived[i].messages.map(asThink);
      thinkTurns += expected.filter(
        (m: Item) => typeof m.content === 'string' && m.content.startsWith('<think>'),
      ).length;
      assert.deepEqual(plain(messages), expected, `${file} line ${i + 1}`);
    });
  }
  assert.ok(thinkTurns >= 20, `only ${thinkTurns} turns with reasoning were compared`);
});

test('Responses → chat keeps item order inside a turn, one <think> per summary, empty summaries dropped', () => {
  const messages = responsesItemsToChatMessages([
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'a' },
        { type: 'input_text', text: 'b' },
      ],
    },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sure.', annotations: [] }] },
    {
      type: 'reasoning',
      summary: [
        { type: 'summary_text', text: 'one' },
        { type: 'summary_text', text: '' },
        { type: 'summary_text', text: 'two' },
      ],
    },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'ok' },
  ]);
  assert.deepEqual(plain(messages), [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    },
    {
      role: 'assistant',
      content: 'Sure.<think>one</think><think>two</think>',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', content: 'ok', tool_call_id: 'c1' },
  ]);
  assert.deepEqual(plain(responsesItemsToChatMessages('hi')), [
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
  ]);
  assert.throws(() => responsesItemsToChatMessages([{ type: 'web_search_call', id: 'w' }]), ChatConversionError);
});

test('the reasoning-parser form: first <think> block to reasoning_content and reasoning, content without blocks', () => {
  assert.deepEqual(withParsedReasoning({ role: 'assistant', content: '<think>a</think>x<think>b</think>' }), {
    role: 'assistant',
    content: 'x',
    reasoning_content: 'a',
    reasoning: 'a',
  });
  assert.deepEqual(withParsedReasoning({ role: 'assistant', content: null, tool_calls: [] }), {
    role: 'assistant',
    content: null,
    tool_calls: [],
  });
  assert.deepEqual(withParsedReasoning({ role: 'user', content: '<think>kept</think>' }), {
    role: 'user',
    content: '<think>kept</think>',
  });
});

test('chat-shaped history in a Responses input: inline tool_calls join the turn, role tool is a tool result (NVIDIA-NeMo/Gym#2515)', () => {
  const messages = plain(
    responsesItemsToChatMessages([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      { role: 'assistant', content: 'It rains.', tool_calls: null },
    ]),
  );
  assert.deepEqual(messages, [
    { content: 'weather?', role: 'user' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', function: { arguments: '{"city":"Oslo"}', name: 'get_weather' }, type: 'function' }],
    },
    { role: 'tool', content: 'rain', tool_call_id: 'c1' },
    { role: 'assistant', content: 'It rains.' },
  ]);
  // The same history as Responses items gives the same messages.
  const items = plain(
    responsesItemsToChatMessages([
      { role: 'user', content: 'weather?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'rain' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It rains.', annotations: [] }] },
    ]),
  );
  assert.deepEqual(items, messages);
  assert.throws(
    () => responsesItemsToChatMessages([{ role: 'assistant', tool_calls: [{ function: { name: 'f' } }] }]),
    /input item 0: tool call 0 needs an id and a function/,
  );
  assert.throws(
    () => responsesItemsToChatMessages([{ role: 'assistant', tool_calls: 'f' }]),
    /tool_calls is not a list/,
  );
});
