import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { taskRowSchema } from '../../gym/schemas';
import { answerMatches, callTool, toolCallMatches, travelTools } from '../../servers/toolEnvironment';
import { parseUserPrompt, renderUserPrompt, solveTask, type TravelTask } from '../../servers/travelTasks';

const demoRows = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, any>);

test('demo rows are NeMo Gym task rows whose ground truth matches the environment', () => {
  assert.ok(demoRows.length >= 16 && demoRows.length <= 24);
  const callCounts = new Set<number>();
  for (const row of demoRows) {
    assert.ok(taskRowSchema.safeParse(row).success, row.task_id);
    assert.equal(row.agent_ref, undefined);
    const task = row.task as TravelTask;
    const user = row.responses_create_params.input.find((m: any) => m.role === 'user');
    assert.equal(user.content, renderUserPrompt(task));
    assert.deepEqual(parseUserPrompt(user.content), task);
    assert.deepEqual(solveTask(task), { calls: row.expected_tool_calls, answer: row.expected_answer });
    assert.deepEqual(row.responses_create_params.tools, travelTools());
    callCounts.add(row.expected_tool_calls.length);
  }
  assert.deepEqual([...callCounts].sort(), [1, 2, 3, 4]);
});

test('tools are deterministic and validate their arguments', () => {
  assert.deepEqual(callTool('convert_currency', { amount: 100, from_currency: 'USD', to_currency: 'eur' }), {
    amount: 92,
    currency: 'EUR',
  });
  assert.deepEqual(
    callTool('get_flight_price', { origin: 'Paris', destination: 'Rome' }),
    callTool('get_flight_price', { origin: 'paris', destination: 'rome' }),
  );
  assert.match(String(callTool('get_weather', { town: 'Paris' }).error), /invalid arguments/);
  assert.match(
    String(callTool('convert_currency', { amount: 1, from_currency: 'USD', to_currency: 'YEN' }).error),
    /unknown currency/,
  );
});

test('call and answer matching', () => {
  assert.ok(
    toolCallMatches(
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: ' paris' } },
    ),
  );
  assert.ok(
    !toolCallMatches(
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Paris', x: 1 } },
    ),
  );
  assert.ok(
    toolCallMatches(
      { name: 'convert_currency', arguments: { amount: 1.005 } },
      { name: 'convert_currency', arguments: { amount: 1.01 } },
    ),
  );
  assert.ok(answerMatches('291.15', 'It is 291.15 Kelvin.'));
  assert.ok(!answerMatches('291.15', 'It is 291 Kelvin.'));
  assert.ok(answerMatches('1234.5', 'It costs 1,234.50 EUR.'));
  assert.ok(answerMatches('cloudy', 'It is Cloudy in Paris.'));
  assert.ok(!answerMatches('cloudy', 'It is sunny in Paris.'));
});
