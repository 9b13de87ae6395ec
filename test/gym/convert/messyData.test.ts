import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { convertToCandidates, type ConvertOptions } from '../../../gym/convert';
import { call, output, readJsonl, rollout, say, think, tempDir, tool, writeJsonl } from './helpers';

async function run(rows: unknown[], options: Partial<ConvertOptions> = {}) {
  const dir = tempDir();
  const file = writeJsonl(path.join(dir, 'rollouts.jsonl'), rows);
  const summary = await convertToCandidates({
    inputs: [file],
    outDir: path.join(dir, 'out'),
    agent_name: 'agent',
    ...options,
  });
  return {
    counts: summary.counts,
    candidates: readJsonl(summary.candidatesPath),
    skipped: readJsonl(summary.skippedPath),
  };
}

const user = { role: 'user', content: 'hi', type: 'message' };

test('an output of cumulative transitions is read as its last transition', async () => {
  const full = [user, call('lookup', 'c1'), output('c1'), say('done')];
  const row = rollout([full.slice(0, 2), full.slice(0, 3), full], {
    responses_create_params: { input: [], tools: [] },
    response: { output: [full.slice(0, 2), full], tools: [tool('lookup')] },
  });
  const { candidates, counts } = await run([row]);
  assert.equal(counts.decision_points, 2);
  assert.deepEqual(
    candidates.map((c) => c.expected_action.type),
    ['function_call', 'message'],
  );
  assert.deepEqual(
    candidates[1].responses_create_params.input.map((i: any) => i.type),
    ['message', 'function_call', 'function_call_output'],
  );
});

test('a string input is one user message', async () => {
  const { candidates } = await run([
    rollout([say('hello')], { responses_create_params: { input: 'what now?', tools: [] } }),
  ]);
  assert.deepEqual(candidates[0].responses_create_params.input, [
    { content: 'what now?', role: 'user', type: 'message' },
  ]);
});

test('tools declared only on the response are the tools the model saw', async () => {
  const row = rollout([call('lookup', 'c1')], {
    responses_create_params: { input: [user], tools: [] },
    response: { output: [call('lookup', 'c1')], tools: [tool('lookup')] },
  });
  const { candidates } = await run([row]);
  assert.deepEqual(candidates[0].responses_create_params.tools, [tool('lookup')]);
  assert.equal(candidates[0].expected_action.name, 'lookup');
});

test('with no tools at all a call is not in the schema, but a message pivot stands', async () => {
  const row = rollout([call('lookup', 'c1'), output('c1'), say('answer')], {
    responses_create_params: { input: [user], tools: [] },
  });
  const { candidates, skipped } = await run([row]);
  assert.deepEqual(
    skipped.map((s) => s.reason),
    ['tool_not_in_schema'],
  );
  assert.deepEqual(candidates[0].responses_create_params.tools, []);
  assert.deepEqual(candidates[0].expected_action, { type: 'message', content: 'answer' });
});

test('reasoning logged after the call it motivated stays in that turn and is dropped from inputs by default', async () => {
  const plain = await run([rollout([call('lookup', 'c1'), think('why'), output('c1'), say('done')])]);
  assert.equal(plain.counts.decision_points, 2);
  assert.deepEqual(
    plain.candidates[1].responses_create_params.input.map((i: any) => i.type),
    ['message', 'function_call', 'function_call_output'],
  );

  const kept = await run([rollout([call('lookup', 'c1'), think('why'), output('c1'), say('done')])], {
    keep_reasoning: true,
  });
  assert.deepEqual(
    kept.candidates[1].responses_create_params.input.map((i: any) => i.type),
    ['message', 'reasoning', 'function_call', 'function_call_output'],
  );

  // A turn of reasoning alone is no decision point.
  const reasoningOnly = await run([
    rollout([
      call('lookup', 'c1'),
      output('c1'),
      think('alone'),
      { role: 'user', content: 'go', type: 'message' },
      say('done'),
    ]),
  ]);
  assert.equal(reasoningOnly.counts.decision_points, 2);
  assert.equal(reasoningOnly.counts.candidates, 2);
});

test('null-valued fields of input items are left out', async () => {
  const out = { ...output('c1'), id: null, status: null };
  const { candidates } = await run([rollout([call('lookup', 'c1'), out, say('done')])]);
  assert.deepEqual(candidates[1].responses_create_params.input[2], {
    type: 'function_call_output',
    call_id: 'c1',
    output: 'ok',
  });
});

test('text beside one call is a function_call pivot, as the verifier reads the turn', async () => {
  const { candidates } = await run([rollout([say('let me look'), call('lookup', 'c1', '{"q": 1}')])]);
  assert.deepEqual(candidates[0].expected_action, { type: 'function_call', name: 'lookup', arguments: '{"q": 1}' });
});

test('assistant turns already in the task input are not pivots but count in depth', async () => {
  const input = [user, say('earlier'), { role: 'user', content: 'more', type: 'message' }];
  const { candidates, counts } = await run([rollout([say('now')], { responses_create_params: { input, tools: [] } })]);
  assert.equal(counts.decision_points, 1);
  assert.equal(candidates[0].provenance.pivot_index, 0);
  assert.equal(candidates[0].provenance.depth, 1);
  assert.equal(candidates[0].provenance.trajectory_length, 1);
  assert.equal(candidates[0].responses_create_params.input.length, 3);
});

test('a response with an error is not a clean source', async () => {
  const { counts } = await run([rollout([say('x')], { response: { output: [say('x')], error: { message: 'boom' } } })]);
  assert.equal(counts.trajectories, 1);
  assert.equal(counts.positive_trajectories, 0);
  assert.equal(counts.decision_points, 0);
});

test('a row that fits the file but not a trajectory is audited, not fatal', async () => {
  const { counts, skipped, candidates } = await run([
    rollout([say('fine')]),
    rollout([], { response: { output: 'oops' } }),
  ]);
  assert.equal(candidates.length, 1);
  assert.equal(counts.by_skip_reason.malformed_trajectory, 1);
  assert.equal(skipped[0].reason, 'malformed_trajectory');
  assert.equal(skipped[0].provenance.source_line, 2);
  assert.match(skipped[0].detail, /response.output is not a list/);
});

test('bad input names the file, the line and what was seen', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'bad.jsonl');
  writeJsonl(file, [rollout([say('ok')])]);
  const { appendFileSync } = await import('node:fs');
  appendFileSync(file, '{"responses_create_params": \n');
  await assert.rejects(
    convertToCandidates({ inputs: [file], outDir: path.join(dir, 'o'), agent_name: 'a' }),
    (err: Error) => {
      assert.match(err.message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: invalid JSON`));
      return true;
    },
  );
  const other = writeJsonl(path.join(dir, 'other.jsonl'), [{ prompt: 'x', completion: 'y' }]);
  await assert.rejects(
    convertToCandidates({ inputs: [other], outDir: path.join(dir, 'o'), agent_name: 'a' }),
    /other\.jsonl:1: no source format fits this row: saw an object with keys \[prompt, completion\]/,
  );
});

test('skip reasons: several calls, bad JSON arguments, unknown tool, unsupported item, empty action, unmatched call id', async () => {
  const rows = [
    rollout([call('lookup', 'a'), call('lookup', 'b')]),
    rollout([call('lookup', 'a', '{"q": ')]),
    rollout([call('missing', 'a')]),
    rollout([{ type: 'web_search_call', id: 'ws', status: 'completed' }]),
    rollout([{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }]),
    rollout([say('   ')]),
    rollout([call('lookup', 'a'), output('zzz'), say('done')]),
    rollout([call('lookup', 'a', '{"q": 2}'), say('done')]),
  ];
  const { skipped, counts, candidates } = await run(rows);
  assert.deepEqual(
    skipped.map((s) => [s.provenance.source_line, s.reason]),
    [
      [1, 'parallel_tool_calls'],
      [2, 'invalid_arguments_json'],
      [3, 'tool_not_in_schema'],
      [4, 'unsupported_item_type'],
      [5, 'unsupported_item_type'],
      [6, 'empty_action'],
      [7, 'unmatched_call_id'],
    ],
  );
  // Line 7's first turn is fine; line 8 is one turn (call then text), a function_call pivot.
  assert.deepEqual(
    candidates.map((c) => c.provenance.source_line),
    [7, 8],
  );
  assert.equal(counts.skipped, 7);
  assert.equal(counts.candidates + counts.skipped, counts.decision_points);
});

test('a later turn after an unanswered call is rejected for its unmatched call id', async () => {
  const { skipped } = await run([
    rollout([call('lookup', 'a'), { role: 'user', content: 'go on', type: 'message' }, say('done')]),
  ]);
  assert.equal(skipped[0].reason, 'unmatched_call_id');
  assert.match(skipped[0].detail, /"a" has no function_call_output/);
});

test('batch pivots turn several calls into one function_call_batch', async () => {
  const { candidates, counts } = await run(
    [rollout([call('lookup', 'a', '{"x":1}'), call('lookup', 'b', '{"x":2}')])],
    { batch_pivots: true },
  );
  assert.equal(counts.by_action_type.function_call_batch, 1);
  assert.deepEqual(candidates[0].expected_action, {
    type: 'function_call_batch',
    calls: [
      { type: 'function_call', name: 'lookup', arguments: '{"x":1}' },
      { type: 'function_call', name: 'lookup', arguments: '{"x":2}' },
    ],
  });
  assert.equal(candidates[0].responses_create_params.parallel_tool_calls, true);
});

test('a message-list trajectory that opens with the assistant has no input for its first turn', async () => {
  const { skipped, candidates } = await run([
    {
      messages: [
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'bye' },
      ],
      reward: 1,
    },
  ]);
  assert.deepEqual(
    skipped.map((s) => s.reason),
    ['empty_input'],
  );
  assert.equal(candidates.length, 1);
});
