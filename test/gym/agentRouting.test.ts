import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fanOutSchema, routeRow, type RoutingOptions } from '../../gym/agentRouting';
import { JsonlError } from '../../gym/errors';

// The routing NeMo Gym 0.7.0's _preprocess_raw_rows gives a row; tests against the real 0.7.0 are in
// test/nemoGym/collectRouting070.test.ts.

const route = (row: Record<string, unknown>, opts: Partial<RoutingOptions>) =>
  routeRow(row, { num_repeats: 1, ...opts }, 'in.jsonl', 3);
const named = (name: string) => ({ agent_ref: { type: 'responses_api_agents', name } });

test('agent_map: agent_ref.name, then task_source, then _default; a row no entry names keeps its agent_ref', () => {
  const agent_map = { a: 'A', travel: 'T', _default: 'D' };
  assert.deepEqual(route({ ...named('a'), task_source: 'travel' }, { agent_map }).agentRef, { name: 'A' });
  assert.deepEqual(route({ ...named('z'), task_source: 'travel' }, { agent_map }).agentRef, { name: 'T' });
  assert.deepEqual(route(named('z'), { agent_map }).agentRef, { name: 'D' });
  assert.deepEqual(route({}, { agent_map }).agentRef, { name: 'D' });
  // A mapped row is restamped even to the name it had: 0.7.0 drops its type.
  assert.deepEqual(route(named('D'), { agent_map }).agentRef, { name: 'D' });
  const kept = route(named('z'), { agent_map: { a: 'A' } });
  assert.equal(kept.agentRef, undefined);
  assert.deepEqual(kept.dispatches, [{ agent: 'z', repeats: 1 }]);
  assert.equal(route({}, { agent_map: { constructor: 'x', _default: 'D' } }).agentRef?.name, 'D');
});

test("0.4.0's agent_name fills only rows without agent_ref (local profiling's rows)", () => {
  assert.deepEqual(route({}, { agent_name: 'P' }).agentRef, { name: 'P' });
  assert.equal(route(named('z'), { agent_name: 'P' }).agentRef, undefined);
});

test('fan_out: one dispatch per listed agent, keyed by the name the row had before agent_map', () => {
  const fan_out = { a: ['X', 'Y'], travel: ['Y'] };
  assert.deepEqual(route(named('a'), { fan_out, agent_map: { a: 'M' }, num_repeats: 2 }), {
    agentRef: { name: 'M' },
    overridden: ['a', 'M'],
    dispatches: [
      { agent: 'X', repeats: 2 },
      { agent: 'Y', repeats: 2 },
    ],
    // What 0.7.0 looks num_repeats up by: each dispatched agent, then the row's own key.
    repeatKeys: ['X', 'a', 'Y'],
  });
  assert.deepEqual(route({ task_source: 'travel' }, { fan_out }).dispatches, [{ agent: 'Y', repeats: 1 }]);
  assert.deepEqual(route(named('b'), { fan_out }).dispatches, [{ agent: 'b', repeats: 1 }]);
});

test('num_repeats dict: the dispatched agent, then the routing key, then _default', () => {
  const num_repeats = { X: 1, a: 3, _default: 2 };
  const fan_out = { a: ['X', 'Y'] };
  assert.deepEqual(
    route(named('a'), { fan_out, num_repeats }).dispatches.map((d) => d.repeats),
    [1, 3],
  );
  assert.deepEqual(route(named('b'), { num_repeats }).dispatches, [{ agent: 'b', repeats: 2 }]);
  assert.deepEqual(route({ task_source: 'a' }, { num_repeats, agent_map: { _default: 'Z' } }).dispatches, [
    { agent: 'Z', repeats: 3 },
  ]);
});

function refused(fn: () => unknown, reason: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof JsonlError);
    assert.match(err.message, /^in\.jsonl:3: /);
    assert.match(err.reason, reason);
    return true;
  });
}

test('a row no agent is given for, or no num_repeats entry names, is refused naming file, line and reason', () => {
  refused(
    () => route({}, {}),
    /no agent_ref and no agent is given for it \(collect\.agent_name or agent_map\._default\)/,
  );
  refused(
    () => route({ task_source: 'travel' }, { agent_map: { other: 'x' } }),
    /task_source "travel" routes to no agent; .*name one in collect\.agent_map/,
  );
  refused(
    () => route(named('a'), { agent_map: { a: 'B' }, num_repeats: { c: 2 } }),
    /^num_repeats has no entry for routing key B \/ a and no _default \(keys: c\)$/,
  );
});

test('fan_out refuses an empty list and an agent listed twice', () => {
  assert.match(fanOutSchema.safeParse({ k: [] }).error!.issues[0]!.message, /empty list/);
  assert.match(fanOutSchema.safeParse({ k: ['a', 'a'] }).error!.issues[0]!.message, /more than once \(a\)/);
  assert.ok(fanOutSchema.safeParse({ k: ['a', 'b'] }).success);
});
