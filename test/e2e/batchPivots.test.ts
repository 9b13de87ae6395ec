import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import type { NightlyMiningResult } from '../../contracts/poolPayloads';
import { pivotGymConfigFileName } from '../../gym/gymConfig';
import { validatePivotDataset } from '../../gym/validator';
import { readJsonlSync } from '../helpers/jsonl';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// A batch pivot end to end: NeMo Gym rollouts shaped like upstream's parallel_example.jsonl (one
// assistant turn calls get_weather for three cities at once) are mined by nightlyMiningWorkflow
// with convert.batch_pivots, profiled against a model that gets all three calls right on every
// other sample, published into the pool and validated.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-batch-pivots';
const CITIES = [
  ['Paris', 'Tokyo', 'Cairo'],
  ['Oslo', 'Lima', 'Rome'],
  ['Nairobi', 'Seoul', 'Quito'],
];
const SYSTEM =
  'You are a data lookup assistant. When the user asks about several independent items, issue ONE tool call per item, all together in the SAME turn, in parallel.';
const TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a single city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', description: "City name, e.g. 'Paris'" } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};
type Row = Record<string, any>;

const question = (cities: string[]) => `What's the weather in ${cities[0]}, ${cities[1]}, and ${cities[2]}?`;
const weatherCall = (city: string, id: string) => ({
  type: 'function_call',
  name: 'get_weather',
  arguments: JSON.stringify({ city }),
  call_id: id,
  id: `fc_${id}`,
  status: 'completed',
});

/** One successful rollout per task, as ng_collect_rollouts writes it. */
function sourceRollout(task: number, cities: string[]): Row {
  const input = [
    { role: 'system', content: SYSTEM, type: 'message' },
    { role: 'user', content: question(cities), type: 'message' },
  ];
  const calls = cities.map((city, i) => weatherCall(city, `call_${task}_${i}`));
  const outputs = cities.map((city, i) => ({
    type: 'function_call_output',
    call_id: `call_${task}_${i}`,
    output: JSON.stringify({ city, temperature_c: 10 + i }),
  }));
  const answer = {
    type: 'message',
    role: 'assistant',
    id: `msg_${task}`,
    status: 'completed',
    content: [{ type: 'output_text', text: cities.map((c, i) => `${c}: ${10 + i} C`).join(', '), annotations: [] }],
  };
  return {
    responses_create_params: { input, tools: [TOOL], parallel_tool_calls: true },
    response: { id: `resp_${task}`, status: 'completed', output: [...calls, ...outputs, answer], tools: [TOOL] },
    reward: 1.0,
    _ng_task_index: task,
    _ng_rollout_index: 0,
    agent_ref: { type: 'responses_api_agents', name: 'parallel_agent' },
  };
}

/** The policy: every other request for the same input gets all calls right, the rest only the first. */
function startPolicy(): Promise<Server> {
  const asked = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: `${req.method} ${req.url}` }));
        return;
      }
      const request = JSON.parse(body) as Row;
      const input = request.input as Row[];
      const key = JSON.stringify(input);
      const n = asked.get(key) ?? 0;
      asked.set(key, n + 1);
      const user = input.find((i) => i.role === 'user')?.content as string;
      const cities = CITIES.find((c) => question(c) === user) ?? [];
      const answered = input.some((i) => i.type === 'function_call_output');
      const output = answered
        ? [
            {
              type: 'message',
              role: 'assistant',
              id: `msg_${n}`,
              status: 'completed',
              content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
            },
          ]
        : (n % 2 === 0 ? cities : cities.slice(0, 1)).map((city, i) => weatherCall(city, `s${n}_${i}`));
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `resp_${n}`,
          object: 'response',
          created_at: 1767225600,
          status: 'completed',
          model: 'batch-test-policy',
          output,
          parallel_tool_calls: true,
          tool_choice: 'auto',
          tools: request.tools ?? [],
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let stack: WorkerTestEnv | undefined;
let policy: Server | undefined;
let baseDir: string;
let result: NightlyMiningResult;

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-batch-'));
  mkdirSync(path.join(baseDir, 'configs'));
  mkdirSync(path.join(baseDir, 'sources'));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'configs/demo_tasks.jsonl'));
  writeFileSync(
    path.join(baseDir, 'sources/parallel_rollouts.jsonl'),
    CITIES.map((cities, task) => `${JSON.stringify(sourceRollout(task, cities))}\n`).join(''),
  );
  policy = await startPolicy();
  const demo = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8'));
  const config = {
    ...demo,
    name: 'batch',
    convert: { ...demo.convert, batch_pivots: true },
    local_profile: {
      ...demo.local_profile,
      num_samples: 4,
      model: { url: `http://127.0.0.1:${(policy.address() as AddressInfo).port}`, api: 'responses' },
    },
    pool: { sources: ['sources/*.jsonl'] },
  };
  writeFileSync(path.join(baseDir, 'configs/batch.yaml'), YAML.stringify(config));
  stack = await startWorkerTestEnv(TASK_QUEUE, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
  result = (await stack.env.client.workflow.execute('nightlyMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: 'batch-pivots',
    args: [{ config_path: 'configs/batch.yaml' }],
  })) as NightlyMiningResult;
});

after(async () => {
  await stack?.stop();
  await new Promise((resolve) => policy?.close(resolve));
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

test('a multi-call turn becomes a function_call_batch pivot that is profiled, published and validated', async (t) => {
  assert.equal(result.status, 'published', result.message);
  const pivots = readJsonlSync<Row>(result.pivotsPath!);
  const batches = pivots.filter((p) => p.expected_action.type === 'function_call_batch');
  assert.equal(batches.length, CITIES.length, 'one batch pivot per source trajectory');
  for (const pivot of batches) {
    const cities = CITIES[pivot.provenance.task_index]!;
    assert.deepEqual(
      pivot.expected_action.calls.map((c: Row) => [c.name, JSON.parse(c.arguments).city]),
      cities.map((city) => ['get_weather', city]),
    );
    assert.equal(pivot.responses_create_params.parallel_tool_calls, true, 'the state allows parallel calls');
    assert.equal(pivot.provenance.local_pass_rate, 0.5, 'two of four samples made all three calls');
    assert.equal(pivot.provenance.local_num_samples, 4);
  }
  t.diagnostic(
    `pool ${result.versionId}: ${pivots.length} pivots, ${batches.length} function_call_batch; counts ${JSON.stringify(result.counts)}`,
  );

  const gymConfig = path.join(path.dirname(result.pivotsPath!), pivotGymConfigFileName('demo_pivots'));
  const validation = await validatePivotDataset({
    path: result.pivotsPath!,
    agentRef: pivots[0]!.agent_ref.name,
    requireFields: [],
    requireAnyFields: [],
    checkToolNames: true,
    batchActions: true,
    gymConfigPath: gymConfig,
  });
  assert.equal(validation.exitCode, 0, validation.stderr);
});
