import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { expectedActionSchema, type ExpectedAction } from '../../../gym/schemas';
import {
  ExpectedArgumentsDecodeError,
  extractAction,
  stepRewardCategoryText,
  toolCallComparatorConfigSchema,
  verifyResponse,
  type ToolCallComparatorConfigInput,
} from '../../../gym/verifier';
import { findMaximumMatching } from '../../../gym/verifier/compare';
import { forEachPythonWord } from '../../../gym/pythonJsonLexis';
import { pythonLower } from '../../../gym/verifier/pythonText';
import { fixturesDir } from '../../helpers/fixtures';

/** `s.split()`, collected. */
function pythonSplit(s: string): string[] {
  const words: string[] = [];
  forEachPythonWord(s, (word) => words.push(word));
  return words;
}

const vectorSchema = z.object({
  id: z.string(),
  family: z.string(),
  config: toolCallComparatorConfigSchema,
  expected_action: expectedActionSchema,
  response: z.object({ output: z.array(z.unknown()) }),
  reward: z.number(),
  category: z.string(),
  category_text: z.string(),
});

function loadVectors(): Array<z.infer<typeof vectorSchema>> {
  const text = fs.readFileSync(path.join(fixturesDir, 'verifier/vectors.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line, index) => {
      const parsed = vectorSchema.safeParse(JSON.parse(line));
      assert.ok(parsed.success, `vectors.jsonl line ${index + 1}: ${parsed.error?.message}`);
      return parsed.data;
    });
}

test('reproduces NeMo Gym on every verifier vector', () => {
  const vectors = loadVectors();
  assert.equal(vectors.length, 4000);
  const failures: string[] = [];
  for (const vector of vectors) {
    let outcome: string;
    try {
      const result = verifyResponse(vector.expected_action, vector.response, vector.config);
      if (result.reward === vector.reward && result.category === vector.category) continue;
      outcome = `${result.reward} ${result.category}`;
    } catch (error) {
      outcome = `threw ${String(error)}`;
    }
    failures.push(`${vector.id}: expected ${vector.reward} ${vector.category}, got ${outcome}`);
  }
  console.log(`verifier vectors: ${vectors.length - failures.length}/${vectors.length}`);
  assert.equal(
    failures.length,
    0,
    `${failures.length} vectors differ; first ones:\n${failures.slice(0, 10).join('\n')}`,
  );
});

test('category sentences match the ones NeMo Gym reports', () => {
  for (const vector of loadVectors()) {
    assert.equal(stepRewardCategoryText[vector.category as keyof typeof stepRewardCategoryText], vector.category_text);
  }
});

const baseConfig: ToolCallComparatorConfigInput = { word_count_similarity_threshold: 0.5 };

function call(name: string, args: string) {
  return { type: 'function_call', name, arguments: args, call_id: 'c', status: 'completed' };
}

function verifyArgs(expectedArgs: string, actualArgs: string, config: ToolCallComparatorConfigInput = baseConfig) {
  const expected: ExpectedAction = { type: 'function_call', name: 'f', arguments: expectedArgs };
  return verifyResponse(expected, { output: [call('f', actualArgs)] }, config);
}

test("shared verdicts are frozen, so no caller can change another response's reward", () => {
  const first = verifyArgs('{"a": 1}', '{"a": 2}');
  const second = verifyArgs('{"a": 1}', '{"a": 3}');
  assert.deepEqual(first, { reward: 0, category: 'ARGUMENT_VALUE_DIFFERENT' });
  assert.equal(first, second);
  assert.throws(() => {
    (first as { reward: number }).reward = 1;
  }, TypeError);
  assert.deepEqual(verifyArgs('{"a": 1}', '{"a": 4}'), { reward: 0, category: 'ARGUMENT_VALUE_DIFFERENT' });
});

test('config defaults are NeMo Gym defaults and the threshold is required', () => {
  assert.deepEqual(toolCallComparatorConfigSchema.parse({ word_count_similarity_threshold: 0.1 }), {
    word_count_similarity_threshold: 0.1,
    floating_point_comparison_threshold: 1e-6,
    parallel_tool_call_rewarding: false,
    allow_subset: false,
    allow_superset: false,
    parallel_tool_call_reward_mode: 'binary_strict',
  });
  assert.equal(toolCallComparatorConfigSchema.safeParse({}).success, false);
  // A complete config skips zod; an incomplete or invalid one still goes through it.
  const expected: ExpectedAction = { type: 'function_call', name: 'f', arguments: '1.0' };
  const output = [call('f', '1.4')];
  const complete = toolCallComparatorConfigSchema.parse({
    word_count_similarity_threshold: 0.5,
    floating_point_comparison_threshold: 0.5,
  });
  assert.equal(verifyResponse(expected, { output }, complete).reward, 1);
  assert.equal(verifyResponse(expected, { output }, { word_count_similarity_threshold: 0.5 }).reward, 0);
  assert.throws(() =>
    verifyResponse(expected, { output }, { ...complete, parallel_tool_call_reward_mode: 'x' as 'f1' }),
  );
  assert.equal(
    toolCallComparatorConfigSchema.safeParse({ ...baseConfig, parallel_tool_call_reward_mode: 'x' }).success,
    false,
  );
});

test('types follow Python: bool is an int, int and float differ', () => {
  assert.equal(verifyArgs('{"x": 1}', '{"x": true}').category, 'EXPECTED_TOOL_CALL');
  assert.equal(verifyArgs('{"x": 0}', '{"x": false}').category, 'EXPECTED_TOOL_CALL');
  assert.equal(verifyArgs('{"x": 2}', '{"x": true}').category, 'ARGUMENT_VALUE_DIFFERENT');
  assert.equal(verifyArgs('{"x": true}', '{"x": 1}').category, 'ARGUMENT_VALUE_TYPE_DIFFERENT');
  assert.equal(verifyArgs('{"x": 1.0}', '{"x": 1}').category, 'ARGUMENT_VALUE_TYPE_DIFFERENT');
  assert.equal(verifyArgs('{"x": 1}', '{"x": 1.0}').category, 'ARGUMENT_VALUE_TYPE_DIFFERENT');
  assert.equal(verifyArgs('{"x": null}', '{"x": 0}').category, 'ARGUMENT_VALUE_TYPE_DIFFERENT');
  assert.equal(verifyArgs('9007199254740993', '9007199254740992').category, 'ARGUMENT_VALUE_DIFFERENT');
  assert.equal(verifyArgs('-0', '0').category, 'EXPECTED_TOOL_CALL');
  assert.equal(verifyArgs('{"x": 1E2}', '{"x": 100.0}').category, 'EXPECTED_TOOL_CALL');
});

test('floats match strictly within the threshold', () => {
  assert.equal(verifyArgs('1.0', '1.000001').category, 'EXPECTED_TOOL_CALL');
  assert.equal(verifyArgs('1.0', '1.0', { ...baseConfig, floating_point_comparison_threshold: 0 }).reward, 0);
  assert.equal(verifyArgs('NaN', 'NaN').category, 'ARGUMENT_VALUE_DIFFERENT');
  assert.equal(verifyArgs('Infinity', '1e400').category, 'ARGUMENT_VALUE_DIFFERENT');
});

test('dict keys are compared as sets, values in expected order', () => {
  assert.equal(verifyArgs('{"a": 1}', '{"a": 1, "b": 2}').category, 'ARGUMENT_OBJECT_KEYS_DIFFERENT');
  assert.equal(verifyArgs('{"toString": 1}', '{"a": 1}').category, 'ARGUMENT_OBJECT_KEYS_DIFFERENT');
  assert.equal(
    verifyArgs('{"10": [1], "2": "x"}', '{"2": 1, "10": [1, 2]}').category,
    'ARGUMENT_LIST_LENGTH_DIFFERENT',
  );
  assert.equal(verifyArgs('{"2": "x", "10": [1]}', '{"10": [1, 2], "2": 1}').category, 'ARGUMENT_VALUE_TYPE_DIFFERENT');
});

test('string rule: exact below two words, word overlap otherwise', () => {
  assert.equal(verifyArgs('"Paris"', '"paris"').reward, 0);
  assert.equal(verifyArgs('"Paris "', '"Paris"').reward, 0);
  assert.equal(verifyArgs('""', '" "').reward, 0);
  assert.equal(verifyArgs('"New York"', '"york NEW"').reward, 1);
  assert.equal(verifyArgs('"New York"', '"New York"', { word_count_similarity_threshold: 0.51 }).reward, 0);
  assert.equal(verifyArgs('"a b"', '"a c"', { word_count_similarity_threshold: 0.25 }).reward, 1);
  assert.equal(verifyArgs('"a b"', '"a c"', { word_count_similarity_threshold: 0.2500001 }).reward, 0);
  assert.equal(verifyArgs('"x y"', '"p q"', { word_count_similarity_threshold: 0 }).reward, 1);
  assert.equal(verifyArgs('"ΟΔΟΣ a"', '"οδοσ a"').reward, 0);
  assert.equal(verifyArgs('"ΟΔΟΣ a"', '"οδος a"').reward, 1);
  assert.equal(verifyArgs('"ẞ a"', '"ß a"').reward, 1);
  assert.equal(verifyArgs('"ß a"', '"ss a"').reward, 0);
});

test('lower-casing follows the Unicode version of the reference CPython', () => {
  assert.equal(pythonLower('İ'), 'i\u0307');
  assert.equal(pythonLower('ΑΣ Σ'), 'ας σ');
  // Letters cased only since Unicode 16 stay as they are, and do not disturb a final sigma.
  assert.equal(pythonLower('\u1c89A\u{10d50}ΑΣ\u1c89'), '\u1c89a\u{10d50}ας\u1c89');
  assert.equal(verifyArgs('"\\u1c89 a"', '"\\u1c8a a"').reward, 0);
});

test('string rule splits on Python whitespace only', () => {
  assert.deepEqual(pythonSplit('a\u0085b\u001cc\u3000d'), ['a', 'b', 'c', 'd']);
  assert.deepEqual(pythonSplit('\ufeffa\u200bb\u180e'), ['\ufeffa\u200bb\u180e']);
  assert.equal(verifyArgs('"a b"', '"a\\u0085b"').reward, 1);
  assert.equal(verifyArgs('"a b"', '"a\\ufeffb c"').reward, 0);
});

test('extract: every function_call counts, other items never do', () => {
  const message = (role: string, content: unknown[]) => ({ type: 'message', role, content });
  const text = (t: string) => ({ type: 'output_text', text: t, annotations: [] });
  assert.equal(extractAction([{ type: 'mcp_call', name: 'f', arguments: '{}' }, { type: 'reasoning' }]), null);
  assert.deepEqual(extractAction([message('user', [text('hi')]), message('assistant', [{ type: 'refusal' }])]), null);
  assert.deepEqual(extractAction([message('assistant', []), message('assistant', [{ type: 'refusal' }, text('')])]), {
    type: 'message',
    content: '',
  });
  const action = extractAction([message('assistant', [text('x')]), { ...call('f', '{}'), status: 'incomplete' }]);
  assert.equal(action?.type, 'function_call');
  assert.equal(extractAction([call('f', '{}'), call('g', '{}')])?.type, 'function_call_batch');
});

test('message and call kinds', () => {
  const expectedMessage: ExpectedAction = { type: 'message', content: 'anything' };
  const anyText = { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'no' }] }] };
  assert.deepEqual(verifyResponse(expectedMessage, anyText, baseConfig), {
    reward: 1,
    category: 'EXPECTED_CHAT_MESSAGE_FOUND',
  });
  assert.deepEqual(verifyResponse(expectedMessage, { output: [call('f', '{}')] }, baseConfig), {
    reward: 0,
    category: 'NO_EXPECTED_CHAT_MESSAGE',
  });
  const expectedCall: ExpectedAction = { type: 'function_call', name: 'f', arguments: '{}' };
  assert.equal(verifyResponse(expectedCall, anyText, baseConfig).category, 'NO_EXPECTED_TOOL_CALL');
  assert.equal(verifyResponse(expectedCall, { output: [] }, baseConfig).category, 'NO_ACTION_FOUND');
  assert.equal(
    verifyResponse(expectedCall, { output: [call('F', 'not json')] }, baseConfig).category,
    'UNEXPECTED_TOOL',
  );
  assert.equal(
    verifyResponse(expectedCall, { output: [call('f', 'not json')] }, baseConfig).category,
    'ARGUMENTS_DECODE_ERROR',
  );
  const brokenRow: ExpectedAction = { type: 'function_call', name: 'f', arguments: '{' };
  assert.throws(
    () => verifyResponse(brokenRow, { output: [call('f', '{}')] }, baseConfig),
    ExpectedArgumentsDecodeError,
  );
  assert.equal(verifyResponse(brokenRow, { output: [call('g', '{}')] }, baseConfig).category, 'UNEXPECTED_TOOL');
});

function batch(...args: string[]): ExpectedAction {
  return { type: 'function_call_batch', calls: args.map((a) => ({ type: 'function_call', name: 'f', arguments: a })) };
}

test('batches: reward modes and the count gate', () => {
  const parallel = { ...baseConfig, parallel_tool_call_rewarding: true, allow_subset: true, allow_superset: true };
  const output = ['1', '2', '3', '"junk a"', '"junk b"'].map((a) => call('f', a));
  assert.deepEqual(
    verifyResponse(batch('1', '2', '3'), { output }, { ...parallel, parallel_tool_call_reward_mode: 'f1' }),
    {
      reward: 0.75,
      category: 'FUNCTION_CALL_BATCH_LENGTH_DIFFERENT',
    },
  );
  assert.deepEqual(verifyResponse(batch('1', '2', '3'), { output: [call('f', '2')] }, parallel), {
    reward: 1,
    category: 'EXPECTED_TOOL_CALL_BATCH',
  });
  assert.deepEqual(
    verifyResponse(
      batch('1', '2'),
      { output: [call('f', '1'), call('f', '5')] },
      { ...parallel, parallel_tool_call_reward_mode: 'fractional' },
    ),
    { reward: 0.5, category: 'ARGUMENT_VALUE_DIFFERENT' },
  );
  const strict = { ...baseConfig, parallel_tool_call_rewarding: true };
  assert.deepEqual(verifyResponse(batch('1', '2'), { output: [call('f', '1')] }, strict), {
    reward: 0,
    category: 'FUNCTION_CALL_BATCH_LENGTH_DIFFERENT',
  });
  assert.deepEqual(verifyResponse(batch('1'), { output: [call('g', '1'), call('f', '1')] }, baseConfig), {
    reward: 1,
    category: 'EXPECTED_TOOL_CALL',
  });
});

test('batches: maximum matching where greedy pairing fails', () => {
  const config = { ...baseConfig, floating_point_comparison_threshold: 1.5 };
  // Expected 1.0 matches both actuals, expected 3.0 only the second: greedy would strand 3.0.
  const result = verifyResponse(batch('1.0', '3.0'), { output: [call('f', '0.5'), call('f', '2.0')] }, config);
  assert.equal(result.category, 'EXPECTED_TOOL_CALL_BATCH');
  assert.deepEqual([...findMaximumMatching([[0, 1], [0]]).entries()].sort(), [
    [0, 1],
    [1, 0],
  ]);
});
