import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { pipelineConfigSchema } from '../../contracts/config';

// NeMo Gym 0.7.0's collection options are optional without a zod default: a defaulted key would
// enter every parsed config, and so the run manifest's config digest, and a run recorded before the
// option existed could not resume.

const OPTIONS_070 = [
  'interleave_repeats',
  'count_missing_rollouts_as_zero',
  'count_failure_classes_as_zero',
  'route_failures_to_sidecar',
  'require_complete',
  'retry_terminal_timeouts',
  'retry_invalid_judge_responses',
  'dispatch_budget_s',
  'drain_margin_s',
  'agent_map',
  'fan_out',
];

test("a config that sets none of 0.7.0's collection options parses without them", () => {
  const demo = parse(readFileSync(path.resolve(__dirname, '../../configs/demo.yaml'), 'utf8'));
  const collect = pipelineConfigSchema.parse(demo).collect as Record<string, unknown>;
  for (const option of OPTIONS_070) assert.ok(!(option in collect), `collect.${option} is not defaulted`);
});

test("0.7.0's collection options are read when set, and a wrong type is refused", () => {
  const config = { name: 'x', collect: { input_jsonl: 'tasks.jsonl', agent_name: 'a', interleave_repeats: true } };
  assert.equal(pipelineConfigSchema.parse(config).collect.interleave_repeats, true);
  const wrong = { ...config, collect: { ...config.collect, interleave_repeats: 'yes' } };
  assert.equal(pipelineConfigSchema.safeParse(wrong).success, false);
});

test("0.7.0's time budget takes seconds, 0 included (a budget already spent), and refuses a negative one", () => {
  const collect = { input_jsonl: 'tasks.jsonl', agent_name: 'a', dispatch_budget_s: 0, drain_margin_s: 90.5 };
  const parsed = pipelineConfigSchema.parse({ name: 'x', collect }).collect;
  assert.equal(parsed.dispatch_budget_s, 0);
  assert.equal(parsed.drain_margin_s, 90.5);
  for (const key of ['dispatch_budget_s', 'drain_margin_s'])
    assert.equal(pipelineConfigSchema.safeParse({ name: 'x', collect: { ...collect, [key]: -1 } }).success, false, key);
});

test("collect routing is validated at parse, as 0.7.0's config validators do", () => {
  const config = (collect: Record<string, unknown>) => ({ name: 'x', collect: { input_jsonl: 't.jsonl', ...collect } });
  const issues = (collect: Record<string, unknown>) =>
    pipelineConfigSchema.safeParse(config(collect)).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  assert.deepEqual(issues({ agent_name: 'a', agent_map: { _default: 'b' } }), [
    'collect.agent_map._default: agent_name "a" conflicts with agent_map._default "b"; set only one of them',
  ]);
  assert.equal(issues({ agent_name: 'a', agent_map: { _default: 'a', x: 'b' } }), undefined);
  assert.equal(issues({ agent_map: { _default: 'a' } }), undefined, 'agent_name may be left out');
  assert.equal(issues({}), undefined, 'rows may route by their own agent_ref');
  assert.match(issues({ fan_out: { x: [] } })![0]!, /^collect\.fan_out\.x: fan_out\[x\] is an empty list/);
  assert.match(issues({ fan_out: { x: ['a', 'b', 'a'] } })![0]!, /lists the same agent more than once \(a\)/);
  assert.deepEqual(pipelineConfigSchema.parse(config({ num_repeats: { a: 2, _default: 1 } })).collect.num_repeats, {
    a: 2,
    _default: 1,
  });
  assert.equal(issues({ num_repeats: { a: 0 } })?.length, 1);
});
