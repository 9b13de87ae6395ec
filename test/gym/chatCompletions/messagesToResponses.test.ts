import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chatCompletionToResponse,
  chatMessageToResponsesOutput,
  chatMessagesToResponsesItems,
  responsesOutputToChatMessage,
} from '../../../gym/chatCompletions';
import { chatMessagesToItems } from '../../../gym/convert/chatCompletions';

// Chat messages → Responses items, the way back of messages.test.ts: one assistant message reads the
// same wherever it is turned into items.

type Item = Record<string, any>;
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

// Each case was run through NeMo Gym 0.4.0 (vllm_model `chat_completions` wrapping the reasoning field,
// then `postprocess_assistant_message_dict`); `expected` is what it returned, ids left out.
const ASSISTANT_CASES: Array<{ name: string; message: Item; reasoning: string[] | null; text: string | null }> = [
  {
    name: '<think> blocks in the middle of the content',
    message: { role: 'assistant', content: 'Checking <think>b</think> now<think>c</think>' },
    reasoning: ['b', 'c'],
    text: 'Checking  now',
  },
  {
    name: 'reasoning_content and a <think> block',
    message: { role: 'assistant', reasoning_content: 'a', content: '<think>b</think>x' },
    reasoning: ['a', 'b'],
    text: 'x',
  },
  {
    name: 'vLLM ≥ 0.16 sends the same text as reasoning_content and reasoning',
    message: {
      role: 'assistant',
      reasoning_content: 'a',
      reasoning: 'a',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    reasoning: ['a'],
    text: null,
  },
  {
    name: 'an empty <think> block',
    message: { role: 'assistant', content: '<think></think>' },
    reasoning: [''],
    text: null,
  },
  { name: 'no reasoning at all', message: { role: 'assistant', content: 'plain' }, reasoning: null, text: 'plain' },
];

const readingOf = (items: Item[]) => ({
  reasoning: items.find((i) => i.type === 'reasoning')?.summary.map((s: Item) => s.text) ?? null,
  text: items.find((i) => i.type === 'message')?.content[0].text ?? null,
});

test('one assistant message reads the same in the converter, the executor and NeMo Gym', () => {
  for (const { name, message, reasoning, text } of ASSISTANT_CASES) {
    const converter = chatMessagesToItems([message], 'seed');
    assert.ok(Array.isArray(converter), name);
    const executor = chatCompletionToResponse({ id: 'x', choices: [{ index: 0, message, finish_reason: 'stop' }] })
      .output as Item[];
    assert.deepEqual(readingOf(converter), { reasoning, text }, `converter: ${name}`);
    assert.deepEqual(readingOf(executor), { reasoning, text }, `executor: ${name}`);
    const callIds = (items: Item[]) => items.filter((i) => i.type === 'function_call').map((i) => [i.id, i.call_id]);
    assert.deepEqual(callIds(converter), callIds(executor), name);
    assert.ok(
      executor.every((i) => !(i.type === 'reasoning' && 'status' in i)),
      'reasoning items carry no status, as in NeMo Gym',
    );
  }
});

test('one model turn ⇄ one assistant message in the engine form', () => {
  const turn = [
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 'think' }] },
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Checking.', annotations: [] }],
    },
    { type: 'function_call', id: 'c9', call_id: 'c9', name: 'f', arguments: '{}', status: 'completed' },
  ];
  const message = responsesOutputToChatMessage(turn);
  assert.deepEqual(message, {
    role: 'assistant',
    content: 'Checking.',
    tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{}' } }],
    reasoning_content: 'think',
    reasoning: 'think',
  });
  assert.deepEqual(chatMessageToResponsesOutput(message as unknown as Item), turn);
});

test('chat messages → Responses items: generated ids, tool outputs, and errors naming the message', () => {
  const ids = (index: number, kind: string) => `${kind}_${index}`;
  const items = chatMessagesToResponsesItems(
    [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: '<think>r</think>ok',
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
      },
      { role: 'tool', tool_call_id: 'call0_1', content: 'done' },
    ],
    ids,
  );
  assert.deepEqual(plain(items), [
    { content: 'hi', role: 'user', type: 'message' },
    { id: 'rs_1', summary: [{ text: 'r', type: 'summary_text' }], type: 'reasoning' },
    {
      id: 'msg_1',
      content: [{ annotations: [], text: 'ok', type: 'output_text' }],
      role: 'assistant',
      status: 'completed',
      type: 'message',
    },
    { arguments: '{"a":1}', call_id: 'call0_1', name: 'f', type: 'function_call', id: 'call0_1', status: 'completed' },
    { call_id: 'call0_1', output: 'done', type: 'function_call_output', status: 'completed' },
  ]);
  assert.throws(
    () =>
      chatMessagesToResponsesItems([
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ function: { name: 'f' } }] },
      ]),
    /message 1: tool call 0 has no id/,
  );
  assert.throws(() => chatMessagesToResponsesItems([{ content: 'x' }]), /message 0 has no role/);
});
