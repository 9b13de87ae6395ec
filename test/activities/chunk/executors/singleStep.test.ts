import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { MaterializedLine } from '../../../../activities/chunk/executors/materializedLine';
import { singleStepExecutor } from '../../../../activities/chunk/executors/singleStep';
import { closePools, RequestFailure } from '../../../../activities/http/client';
import type { JsonlRecord } from '../../../../gym/jsonl';
import { materializeOptionsSchema, materializeRows } from '../../../../gym/materialize';
import type { MaterializedRow } from '../../../../gym/schemas';
import { resolveComparatorConfig } from '../../../../gym/verifier/config';
import { materializedInput, rolloutText, writtenResult } from './materializedInput';
import { listenJson, type RunningServer } from '../../../../servers/http';

// A stand-in Chat Completions engine on 127.0.0.1 that records every body it receives and answers
// with the message the test queued, the way vLLM or llama-server would.
let engine: RunningServer;
const received: Array<Record<string, any>> = [];
let answer: Record<string, unknown> = {};

before(async () => {
  engine = await listenJson({
    host: '127.0.0.1',
    port: 0,
    handler: (request) => {
      received.push(request.body as Record<string, any>);
      return {
        body: {
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: 1700000000,
          model: 'engine-model',
          choices: [{ index: 0, message: answer, finish_reason: 'stop' }],
          usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 },
        },
      };
    },
  });
});
after(async () => {
  await closePools();
  await engine.close();
});

const tool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  strict: true,
};

/** Pivot rows materialized by the project itself, so the per-repeat seed sits where collect puts it. */
async function materialize(task: Record<string, unknown>, numRepeats: number): Promise<MaterializedRow[]> {
  const text = JSON.stringify(task);
  const records: JsonlRecord[] = [{ value: task, line: 1, byteOffset: 0, byteLength: text.length + 1, text }];
  const options = materializeOptionsSchema.parse({
    agent_name: 'pivots',
    num_repeats: numRepeats,
    seed_per_repeat: true,
  });
  const rows: MaterializedRow[] = [];
  for await (const row of materializeRows(records, options, 'pivots.jsonl')) rows.push(row);
  return rows;
}

function executor() {
  return singleStepExecutor({
    modelUrl: engine.url,
    api: 'chat_completions',
    model: 'policy',
    timeoutMs: 5000,
    maxConcurrency: 2,
    comparatorConfig: resolveComparatorConfig({ word_count_similarity_threshold: 0.5 }),
  });
}

test('each repeat reaches the engine with its seed and chat_template_kwargs unpacked from metadata', async () => {
  const rows = await materialize(
    {
      responses_create_params: {
        input: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [tool],
        tool_choice: 'auto',
        parallel_tool_calls: false,
        metadata: { chat_template_kwargs: '{"enable_thinking": false}' },
      },
      expected_action: { type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}' },
    },
    3,
  );
  answer = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
  };
  received.length = 0;
  for (const row of rows) await executor().run(materializedInput(row), new AbortController().signal);

  assert.deepEqual(
    received.map((b) => b.seed),
    [0, 1, 2],
  );
  for (const body of received) {
    assert.deepEqual(body.chat_template_kwargs, { enable_thinking: false });
    assert.equal(body.model, 'policy');
    assert.equal(body.tool_choice, 'auto');
    assert.equal(body.parallel_tool_calls, false);
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather of a city', parameters: tool.parameters },
      },
    ]);
  }
});

test('a row without tools sends neither tool_choice nor parallel_tool_calls', async () => {
  const [row] = await materialize(
    {
      responses_create_params: {
        input: [{ role: 'user', content: 'Say hi.' }],
        tools: [],
        tool_choice: 'auto',
        parallel_tool_calls: false,
      },
      expected_action: { type: 'message', content: 'hi' },
    },
    1,
  );
  answer = { role: 'assistant', content: 'hi' };
  received.length = 0;
  const rollout = await executor().run(materializedInput(row!), new AbortController().signal);
  const result = writtenResult(rollout);
  // A reward is a Python float, as a NeMo Gym resources server answers it.
  assert.match(rolloutText(rollout), /,"reward":1\.0,"category":"/);
  assert.equal(received.length, 1);
  assert.equal('tool_choice' in received[0]!, false);
  assert.equal('parallel_tool_calls' in received[0]!, false);
  assert.equal('tools' in received[0]!, false);
  assert.equal(result.reward, 1);
});

test('the rollout carries Responses usage and reads <think> reasoning the way NeMo Gym does', async () => {
  const [row] = await materialize(
    {
      responses_create_params: {
        input: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [tool],
        tool_choice: 'auto',
        parallel_tool_calls: false,
      },
      expected_action: { type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}' },
    },
    1,
  );
  answer = {
    role: 'assistant',
    content: 'Let me check.<think>the user wants Paris</think>',
    tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
  };
  const result = writtenResult(await executor().run(materializedInput(row!), new AbortController().signal));
  const response = result.response as Record<string, any>;
  assert.deepEqual(response.usage, {
    input_tokens: 31,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 9,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 40,
  });
  assert.deepEqual(
    response.output.map((i: any) => i.type),
    ['reasoning', 'message', 'function_call'],
  );
  assert.equal(response.output[0].summary[0].text, 'the user wants Paris');
  assert.equal(response.output[1].content[0].text, 'Let me check.');
  assert.equal(result.reward, 1);
});

test('a row Chat Completions cannot express fails once, without retries', async () => {
  const [row] = await materialize(
    {
      responses_create_params: { input: [{ role: 'user', content: 'x' }], metadata: { extra_body: '{"seed": 1}' } },
      expected_action: { type: 'message', content: 'x' },
    },
    1,
  );
  const broken = {
    ...row!,
    responses_create_params: { ...row!.responses_create_params, input: [{ type: 'web_search_call', id: 'ws' }] },
  };
  received.length = 0;
  await assert.rejects(
    executor().run(materializedInput(broken), new AbortController().signal),
    (err: unknown) => err instanceof RequestFailure && !err.retryable,
  );
  assert.equal(received.length, 0);
});

test("the engine receives the row's number kinds: a `1.0` and a float field's `1` arrive as `1.0`, on both APIs", async () => {
  const text = `{"responses_create_params":{"input":[{"role":"user","content":"Weather in Paris?"}],"temperature":1,"top_p":1.0,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"days":{"type":"number","minimum":1.0}}}}],"metadata":{"extra_body":"{\\"seed\\": 7, \\"min_p\\": 0.0}"}},"expected_action":{"type":"message","content":"hi"},"agent_ref":{"name":"a"},"_ng_task_index":0,"_ng_rollout_index":0}`;
  const input = new MaterializedLine(text, 'materialized_inputs.jsonl', 1);
  const bodies: string[] = [];
  const rawEngine = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      const message = { role: 'assistant', content: 'hi' };
      const answer =
        req.url === '/v1/responses'
          ? {
              id: 'resp_1',
              object: 'response',
              output: [
                {
                  type: 'message',
                  id: 'm',
                  role: 'assistant',
                  status: 'completed',
                  content: [{ type: 'output_text', text: 'hi', annotations: [] }],
                },
              ],
            }
          : {
              id: 'c',
              object: 'chat.completion',
              created: 1,
              model: 'e',
              choices: [{ index: 0, message, finish_reason: 'stop' }],
            };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => rawEngine.listen(0, '127.0.0.1', resolve));
  try {
    const modelUrl = `http://127.0.0.1:${(rawEngine.address() as AddressInfo).port}`;
    const common = {
      modelUrl,
      model: 'policy',
      timeoutMs: 5000,
      maxConcurrency: 1,
      comparatorConfig: resolveComparatorConfig({ word_count_similarity_threshold: 0.5 }),
    };
    for (const api of ['responses', 'chat_completions'] as const) {
      await singleStepExecutor({ ...common, api, unpackExtraBody: true }).run(input, new AbortController().signal);
    }
  } finally {
    await new Promise((resolve) => rawEngine.close(resolve));
  }
  const [responsesBody, chatBody] = bodies;
  assert.match(responsesBody!, /^\{"seed":7,"min_p":0\.0,"input":/);
  for (const body of bodies) {
    assert.match(body, /"temperature":1\.0/);
    assert.match(body, /"top_p":1\.0/);
    assert.match(body, /"minimum":1\.0/);
  }
  assert.match(chatBody!, /^\{"seed":7,"min_p":0\.0,"messages":/);
});
