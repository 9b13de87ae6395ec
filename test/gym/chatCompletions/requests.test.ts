import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chatCompletionToResponse,
  chatRequestToResponses,
  responseToChatCompletion,
} from '../../../gym/chatCompletions';

type Item = Record<string, any>;

test('Response → chat completion for the policy server, and its chat requests back to Responses', () => {
  const completion = responseToChatCompletion({
    id: 'resp_abc',
    created_at: 1,
    model: 'sim',
    output: [
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'r' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
    ],
    usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 },
  });
  assert.equal(completion.id, 'chatcmpl-abc');
  const choice = (completion.choices as Item[])[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.deepEqual(choice.message, { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }], reasoning_content: 'r', reasoning: 'r' });
  assert.deepEqual(completion.usage, { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  assert.deepEqual(chatCompletionToResponse(completion).output, [
    { summary: [{ text: 'r', type: 'summary_text' }], type: 'reasoning' },
    { arguments: '{}', call_id: 'c', name: 'f', type: 'function_call', id: 'c', status: 'completed' },
  ]);

  const request = chatRequestToResponses({
    model: 'm',
    seed: 4,
    max_tokens: 9,
    tool_choice: { type: 'function', function: { name: 'f' } },
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'go' }],
  });
  assert.deepEqual(request, {
    model: 'm',
    input: [{ content: 'be brief', role: 'system', type: 'message' }, { content: 'go', role: 'user', type: 'message' }],
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    tool_choice: { type: 'function', name: 'f' },
    max_output_tokens: 9,
    seed: 4,
  });
});
