import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { convertToCandidates, type ConvertOptions } from '../../../gym/convert';
import { chatMessagesToItems } from '../../../gym/convert/chatCompletions';
import { fixturesDir } from '../../helpers/fixtures';
import { projectAll, readJsonl, rollout, say, tempDir, writeJsonl } from './helpers';

async function run(rows: unknown[], options: Partial<ConvertOptions> = {}) {
  const dir = tempDir();
  const file = writeJsonl(path.join(dir, 'traces.jsonl'), rows);
  const summary = await convertToCandidates({
    inputs: [file],
    outDir: path.join(dir, 'out'),
    agent_name: 'agent',
    ...options,
  });
  const metrics = JSON.parse(readFileSync(summary.metricsPath, 'utf8'));
  return {
    counts: summary.counts,
    candidates: readJsonl(summary.candidatesPath),
    skipped: readJsonl(summary.skippedPath),
    metrics,
    file,
  };
}

test("chat messages convert back to the Responses items NeMo Gym's converter started from", () => {
  const data = JSON.parse(
    readFileSync(path.join(fixturesDir, 'gym', 'chat', 'gym_vllm_round_trip_test_data.json'), 'utf8'),
  );
  const original = [{ role: 'system', content: 'system' }, { role: 'user', content: 'hello!' }, ...data.input.output];
  const items = chatMessagesToItems(data.expected_output.messages, 'seed');
  assert.ok(Array.isArray(items));
  assert.deepEqual(
    items.map((i) => i.type),
    original.map((i: any) => i.type ?? 'message'),
  );
  assert.deepEqual(projectAll(items), projectAll(original));
  const reasoning = (list: any[]) =>
    list.filter((i) => i.type === 'reasoning').map((i) => i.summary.map((s: any) => s.text));
  assert.deepEqual(reasoning(items), reasoning(original), '<think> blocks become reasoning items');
  assert.deepEqual(
    chatMessagesToItems(data.expected_output.messages, 'seed'),
    items,
    'generated ids are deterministic',
  );
});

test('chat tools in the nested function form become Responses tools', async () => {
  const { candidates } = await run([
    {
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
        },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object' } } },
      ],
      reward: 1,
    },
  ]);
  assert.deepEqual(candidates[0].responses_create_params.tools, [
    { type: 'function', name: 'get_weather', description: 'd', parameters: { type: 'object' } },
  ]);
  assert.deepEqual(candidates[0].expected_action, {
    type: 'function_call',
    name: 'get_weather',
    arguments: '{"city":"Paris"}',
  });
  assert.equal(candidates[0].provenance.source_format, 'chat_completions');
});

const conversational = {
  id: 'trace-7',
  source: 'support-logs',
  score: 1,
  tools: JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]),
  conversations: [
    { from: 'system', value: 'be brief' },
    { from: 'human', value: 'weather in Paris?' },
    { from: 'gpt', value: 'Checking.', reasoning: 'need the weather' },
    { from: 'function_call', value: '{"name": "get_weather", "arguments": {"city": "Paris"}}' },
    { from: 'observation', value: '{"temp": 21}' },
    { from: 'gpt', value: '21C', thinking: 'answer now' },
  ],
};

test('conversational traces: speaker turns, per-turn reasoning and the trace provenance', async () => {
  const { candidates, metrics } = await run([conversational]);
  assert.equal(metrics.source_formats[Object.keys(metrics.source_formats)[0]], 'conversational');
  assert.deepEqual(
    candidates.map((c) => c.expected_action),
    [
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'message', content: '21C' },
    ],
  );
  assert.deepEqual(projectAll(candidates[1].responses_create_params.input), [
    { type: 'message', role: 'system', text: 'be brief' },
    { type: 'message', role: 'user', text: 'weather in Paris?' },
    { type: 'message', role: 'assistant', text: 'Checking.' },
    { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', call_id: 'call_0' },
    { type: 'function_call_output', call_id: 'call_0', output: '{"temp": 21}' },
  ]);
  assert.deepEqual(candidates[0].provenance.source_trace, { id: 'trace-7', source: 'support-logs' });
  assert.equal(candidates[1].provenance.depth, 1);

  const kept = await run([conversational], { keep_reasoning: true });
  const input = kept.candidates[1].responses_create_params.input;
  assert.deepEqual(input[2].summary, [{ text: 'need the weather', type: 'summary_text' }]);
});

test('generic rows are read through a field mapping, and auto-detected by it', async () => {
  const row = {
    trace: {
      steps: [
        { role: 'user', content: 'sum 1 and 2' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'x', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
        },
        { role: 'tool', tool_call_id: 'x', content: '3' },
        { role: 'assistant', content: '3' },
      ],
    },
    fns: [{ type: 'function', name: 'add', parameters: { type: 'object' } }],
    outcome: { score: 1 },
    ids: { task: 4, attempt: 2 },
  };
  const field_mapping = {
    messages: 'trace.steps',
    tools: 'fns',
    reward: 'outcome.score',
    task_index: 'ids.task',
    rollout_index: 'ids.attempt',
  };
  const { candidates, metrics } = await run([row], { field_mapping });
  assert.equal(Object.values(metrics.source_formats)[0], 'tool_messages');
  assert.deepEqual(
    candidates.map((c) => c.expected_action.type),
    ['function_call', 'message'],
  );
  assert.deepEqual([candidates[0].provenance.task_index, candidates[0].provenance.rollout_index], [4, 2]);
  const forced = await run([row], { source_format: 'tool_messages', field_mapping });
  assert.equal(forced.counts.candidates, 2);
});

test('a forced source format that does not fit the file is an error naming the file and line', async () => {
  await assert.rejects(
    run([rollout([say('x')])], { source_format: 'chat_completions' }),
    /traces\.jsonl:1: source_format is chat_completions but this row does not have that shape \(saw an object with keys \[responses_create_params, response, reward\]\)/,
  );
  await assert.rejects(run([]), /traces\.jsonl: no rows/);
});
