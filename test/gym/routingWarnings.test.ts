import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeRow, type RoutingOptions } from '../../gym/agentRouting';
import { RoutingWarnings } from '../../gym/routingWarnings';

// 0.7.0's two routing warnings from routed rows; test/nemoGym/collectRoutingWarnings070.test.ts
// compares them with what the real 0.7.0 prints.

function warned(rows: Record<string, unknown>[], opts: RoutingOptions): string[] {
  const warnings = new RoutingWarnings(opts.num_repeats);
  rows.forEach((row, i) => warnings.add(routeRow(row, opts, 'in.jsonl', i + 1)));
  return warnings.messages();
}

const named = (name: string) => ({ agent_ref: { name } });

test('overridden agent_refs: each (row agent, mapped agent) pair once, sorted, as Python shows tuples', () => {
  const rows = [named("o'b"), named('b'), named('a'), named('b'), named('M'), {}];
  assert.deepEqual(warned(rows, { agent_map: { _default: 'M' }, num_repeats: 1 }), [
    `agent_map overrode agent_ref values already present in the data: [('a', 'M'), ('b', 'M'), ("o'b", 'M')]. ` +
      'Prior to this release, +agent_name only filled rows missing an agent_ref; it now re-routes every row.',
  ]);
});

test('num_repeats keys no row was looked up by, _default aside; none for an int num_repeats', () => {
  const num_repeats = { z_typo: 1, a: 2, travel: 1, M: 3, _default: 1 };
  const rows = [named('a'), { task_source: 'travel' }];
  assert.deepEqual(warned(rows, { agent_map: { travel: 'T' }, num_repeats }), [
    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): ['M', 'z_typo']",
  ]);
  assert.deepEqual(warned(rows, { agent_map: { travel: 'T' }, num_repeats: 2 }), []);
});

test('legacy routing looks num_repeats up by task_source, else the environment server', () => {
  const legacy_environment_server = { name: 'relay', agent: 'A' };
  const num_repeats = { relay: 1, travel: 2, A: 1 };
  const rows = [{ task_source: 'travel' }, {}];
  assert.deepEqual(warned(rows, { legacy_environment_server, num_repeats }), [
    "num_repeats dict contains agent names that never appeared in input rows (possible typo?): ['A']",
  ]);
});
