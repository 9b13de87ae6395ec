import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skillAt } from '../../servers/policyChoices';
import { requestSeed, simulateResponse, trainingStep } from '../../servers/policySimulator';
import { verifyTrajectory, travelVerifyRequestSchema } from '../../servers/resources';
import { callTool, isToolName, toolCallMatches } from '../../servers/toolEnvironment';

type Item = Record<string, any>;
const demoRows = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Item);
const SIM_SEED = 7;

const seeded = (params: Item, seed: number): Item & { input: Item[] } => ({
  input: params.input,
  ...params,
  metadata: { extra_body: JSON.stringify({ seed }) },
});

// The agent loop without HTTP, so the statistics below stay fast.
function rollout(row: Item, seed: number): { reward: number; output: Item[]; params: Item } {
  const params = seeded(row.responses_create_params, seed);
  const output: Item[] = [];
  let last: Item = {};
  for (let step = 0; step < 10; step++) {
    last = simulateResponse({ ...params, input: [...params.input, ...output] }, { seed: SIM_SEED });
    output.push(...last.output);
    const calls = last.output.filter((i: Item) => i.type === 'function_call');
    for (const c of calls) {
      const result = isToolName(c.name) ? callTool(c.name, JSON.parse(c.arguments)) : { error: 'no such tool' };
      output.push({ type: 'function_call_output', call_id: c.call_id, output: JSON.stringify(result) });
    }
    if (calls.length === 0) break;
  }
  const verified = verifyTrajectory(travelVerifyRequestSchema.parse({ ...row, response: { ...last, output } }));
  return { reward: verified.reward, output, params };
}

const sameAction = (expected: Item, actual: Item): boolean =>
  expected.type === 'function_call'
    ? actual.type === 'function_call' &&
      toolCallMatches(
        { name: expected.name, arguments: JSON.parse(expected.arguments) },
        { name: actual.name, arguments: JSON.parse(actual.arguments) },
      )
    : actual.type === 'message' && actual.content[0].text === expected.content[0].text;

test('same request and seeds give byte-identical responses; another seed changes them', () => {
  const params = seeded(demoRows[0].responses_create_params, 3);
  const again = seeded(demoRows[0].responses_create_params, 3);
  const a = JSON.stringify(simulateResponse(params, { seed: 1 }));
  assert.equal(JSON.stringify(simulateResponse(again, { seed: 1 })), a);
  assert.notEqual(JSON.stringify(simulateResponse(params, { seed: 2 })), a);
  assert.notEqual(JSON.stringify(simulateResponse(seeded(params, 4), { seed: 1 })), a);
});

test('the response is labelled as simulated and shaped like a Responses object', () => {
  const r = simulateResponse(demoRows[0].responses_create_params, { seed: 0 }) as Item;
  assert.equal(r.object, 'response');
  assert.equal(r.model, 'pivot-miner-simulated-policy');
  assert.deepEqual(r.metadata, { simulator: 'pivot-miner seeded policy simulator' });
  assert.deepEqual(
    r.output.map((i: Item) => i.type),
    ['reasoning', 'function_call'],
  );
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
});

test('request seed comes from metadata.extra_body or a top-level seed', () => {
  assert.equal(requestSeed({ input: 'x', metadata: { extra_body: '{"seed": 3}' } }), 3);
  assert.equal(requestSeed({ input: 'x', seed: 5 }), 5);
  assert.equal(requestSeed({ input: 'x' }), undefined);
});

test('a training step in the model name raises skills', () => {
  assert.equal(trainingStep('sim-policy@step-2'), 2);
  assert.equal(trainingStep('sim-policy'), 0);
  assert.equal(skillAt(0.5, 0), 0.5);
  assert.ok(skillAt(0.5, 2) > 0.8);
  assert.equal(
    simulateResponse({ input: 'hi', model: 'sim-policy@step-2' }, { seed: 0 }).model,
    'pivot-miner-simulated-policy@step-2',
  );
});

test('an unknown request gets a polite final message', () => {
  const r = simulateResponse({ input: 'Write me a poem.' }, { seed: 0 }) as Item;
  assert.equal(r.output.at(-1).type, 'message');
});

test('local profiling of successful trajectories spans all-pass, mixed and all-fail pivots', () => {
  const passCounts: number[] = [];
  for (const row of demoRows) {
    const success = [0, 1, 2, 3].map((s) => rollout(row, s)).find((r) => r.reward === 1);
    if (!success) continue;
    success.output.forEach((item, i) => {
      if (item.type !== 'function_call' && item.type !== 'message') return;
      // A pivot row re-asks the prefix before the turn, with the pivot row's request options.
      const prefix = success.output.slice(0, i - 1);
      let pass = 0;
      for (let seed = 0; seed < 8; seed++) {
        const params = {
          ...seeded(success.params, seed),
          input: [...success.params.input, ...prefix],
          tool_choice: 'auto',
          parallel_tool_calls: false,
        };
        const action = (simulateResponse(params, { seed: SIM_SEED }).output as Item[]).find(
          (o) => o.type !== 'reasoning',
        )!;
        if (sameAction(item, action)) pass++;
      }
      passCounts.push(pass);
    });
  }
  assert.ok(passCounts.includes(8), 'some pivot is all-pass');
  assert.ok(passCounts.includes(0), 'some pivot is all-fail');
  assert.ok(
    passCounts.some((p) => p > 0 && p < 8),
    'some pivot is mixed',
  );
});
