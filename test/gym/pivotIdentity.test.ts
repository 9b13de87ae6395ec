import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { canonicalJson, pivotKey } from '../../gym/pivotIdentity';

const params = {
  input: [
    { type: 'message', role: 'user', content: 'Book a flight to Oslo' },
    { type: 'function_call', name: 'search', arguments: '{"to":"OSL"}', call_id: 'c1' },
    { type: 'function_call_output', call_id: 'c1', output: '[{"id":7}]' },
  ],
  tools: [
    {
      type: 'function',
      name: 'book',
      parameters: { type: 'object', properties: { id: { type: 'integer' } } },
      strict: true,
    },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
};
const action = { type: 'function_call', name: 'book', arguments: '{"id":7}' };
const row = { responses_create_params: params, expected_action: action };

/** The same value with the keys of every object in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

test('canonical JSON sorts object keys at every depth and keeps array order', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }, 3], c: null } }),
    '{"a":{"c":null,"d":[{"x":2,"y":1},3]},"b":1}',
  );
  assert.equal(canonicalJson(reversedKeys(row)), canonicalJson(row));
  assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  assert.equal(canonicalJson({ a: undefined, b: 'x' }), '{"b":"x"}', 'absent and undefined fields are the same');
  assert.equal(canonicalJson('ünï'), JSON.stringify('ünï'));
});

test('the key reads only the request and the expected action', () => {
  const key = pivotKey(row);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(pivotKey(reversedKeys(row) as typeof row), key, 'reordered object keys, same pivot');
  const withProvenance = {
    ...row,
    agent_ref: { type: 'responses_api_agents', name: 'x' },
    provenance: { uuid: 'u', source_line: 3 },
    extra: 1,
  };
  assert.equal(pivotKey(withProvenance), key, 'provenance, agent_ref and extra fields do not matter');
  // Pools persist keys (a curriculum's retired list), so the byte form is part of the contract.
  const expected = createHash('sha256')
    .update(`[${canonicalJson(params)},${canonicalJson(action)}]`)
    .digest('hex');
  assert.equal(key, expected);
});

test('a different state or expected action is a different pivot', () => {
  const key = pivotKey(row);
  const variants: Record<string, unknown>[] = [
    { ...row, expected_action: { ...action, name: 'search' } },
    { ...row, expected_action: { ...action, arguments: '{"id": 7}' } },
    { ...row, expected_action: { type: 'message', content: 'Booked.' } },
    { ...row, responses_create_params: { ...params, input: params.input.slice(0, 1) } },
    { ...row, responses_create_params: { ...params, input: [...params.input].reverse() } },
    { ...row, responses_create_params: { ...params, tools: [] } },
    { ...row, responses_create_params: { ...params, parallel_tool_calls: true } },
    { responses_create_params: params },
  ];
  const keys = variants.map((v) => pivotKey(v));
  for (const [i, k] of keys.entries()) assert.notEqual(k, key, `variant ${i}`);
  assert.equal(new Set(keys).size, keys.length, 'the variants differ from one another too');
});
