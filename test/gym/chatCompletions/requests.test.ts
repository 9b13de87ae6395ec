import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChatConversionError,
  chatCompletionToResponse,
  chatRequestToResponses,
  responseToChatCompletion,
  responsesEngineRequest,
  responsesRequestToChat,
} from '../../../gym/chatCompletions';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';
import { orjsonDumps } from '../../../gym/pythonJsonDumps';
import { runNemoGymPython } from '../../helpers/nemoGymPython';

type Item = Record<string, any>;

/** An engine request body as plain JSON, to compare structure (bytes are compared against NeMo Gym below). */
const plain = (body: unknown): Item => JSON.parse(orjsonDumps(body));

const tool = {
  type: 'function',
  name: 'f',
  description: 'd',
  parameters: { type: 'object', properties: {} },
  strict: true,
};

// The request below went through NeMo Gym 0.4.0's vllm_model (ResponsesConverter, then
// `_preprocess_chat_completion_create_params` with its default config); `expected` is the body it
// handed to the engine client, apart from `model`, which vllm_model takes from its own config.
test('a Responses request reaches a chat engine as NeMo Gym vllm_model sends it', () => {
  const request = {
    model: 'policy',
    input: [
      { role: 'user', content: 'hi' },
      {
        type: 'reasoning',
        id: 'rs',
        summary: [
          { type: 'summary_text', text: 'one' },
          { type: 'summary_text', text: 'two' },
        ],
      },
      {
        type: 'message',
        id: 'msg',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Sure.', annotations: [] }],
      },
      { type: 'function_call', id: 'c1', call_id: 'c1', name: 'f', arguments: '{}', status: 'completed' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ],
    tools: [tool],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    max_output_tokens: 64,
    temperature: 0.5,
    metadata: { extra_body: '{"seed": 3, "top_k": 5}', chat_template_kwargs: '{"enable_thinking": false}' },
  };
  const expected = {
    seed: 3,
    top_k: 5,
    messages: [
      { content: 'hi', role: 'user' },
      {
        role: 'assistant',
        content: 'Sure.',
        tool_calls: [{ id: 'c1', function: { arguments: '{}', name: 'f' }, type: 'function' }],
        reasoning_content: 'one',
        reasoning: 'one',
      },
      { content: 'ok', role: 'tool', tool_call_id: 'c1' },
    ],
    max_tokens: 64,
    metadata: request.metadata,
    parallel_tool_calls: false,
    temperature: 0.5,
    tool_choice: 'auto',
    tools: [
      { function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } }, type: 'function' },
    ],
    model: 'policy',
    chat_template_kwargs: { enable_thinking: false },
  };
  assert.deepEqual(plain(responsesRequestToChat(request)), expected);
});

test('request fields win over extra_body, and malformed metadata is refused', () => {
  const body = plain(
    responsesRequestToChat({
      input: 'x',
      temperature: 0.2,
      metadata: { extra_body: '{"temperature": 1.5, "seed": 0}' },
    }),
  );
  assert.equal(body.temperature, 0.2);
  assert.equal(body.seed, 0);
  assert.equal('chat_template_kwargs' in body, false);
  assert.throws(
    () => responsesRequestToChat({ input: 'x', metadata: { extra_body: '{"seed":' } }),
    ChatConversionError,
  );
  assert.throws(
    () => responsesRequestToChat({ input: 'x', metadata: { chat_template_kwargs: '[1]' } }),
    /chat_template_kwargs must be a JSON object/,
  );
});

test('without tools there is no tool_choice or parallel_tool_calls (vLLM answers 400 otherwise)', () => {
  for (const tools of [undefined, []]) {
    const body = plain(responsesRequestToChat({ input: 'x', tools, tool_choice: 'auto', parallel_tool_calls: false }));
    assert.equal('tool_choice' in body, false);
    assert.equal('parallel_tool_calls' in body, false);
    assert.equal('tools' in body, false);
  }
  const named = plain(
    responsesRequestToChat({ input: 'x', tools: [tool], tool_choice: { type: 'function', name: 'f' } }),
  );
  assert.deepEqual(named.tool_choice, { type: 'function', function: { name: 'f' } });
});

test('chat completion → Response: usage renamed and summed, truncation reported', () => {
  const response = chatCompletionToResponse({
    id: 'chatcmpl-1',
    created: 5,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'length' }],
    usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 99 },
  });
  assert.deepEqual(response.usage, {
    input_tokens: 11,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 4,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  });
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(response.created_at, 5);
  assert.throws(() => chatCompletionToResponse({ choices: [] }), /no choices\[0\]\.message/);
});

test('Response → chat completion for the policy server, and its chat requests back to Responses', () => {
  const completion = responseToChatCompletion({
    id: 'resp_abc',
    created_at: 1,
    model: 'sim',
    output: [
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'r' }] },
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
    ],
    usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 },
  });
  assert.equal(completion.id, 'chatcmpl-abc');
  const choice = (completion.choices as Item[])[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.deepEqual(choice.message, {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    reasoning_content: 'r',
    reasoning: 'r',
  });
  assert.deepEqual(completion.usage, { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  assert.deepEqual(chatCompletionToResponse(completion).output, [
    { summary: [{ text: 'r', type: 'summary_text' }], type: 'reasoning' },
    { arguments: '{}', call_id: 'c', name: 'f', type: 'function_call', id: 'c', status: 'completed' },
  ]);

  const request = chatRequestToResponses({
    model: 'm',
    seed: 4,
    max_tokens: 9,
    tool_choice: { type: 'function', function: { name: 'f' } },
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'go' },
    ],
  });
  assert.deepEqual(request, {
    model: 'm',
    input: [
      { content: 'be brief', role: 'system', type: 'message' },
      { content: 'go', role: 'user', type: 'message' },
    ],
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    tool_choice: { type: 'function', name: 'f' },
    max_output_tokens: 9,
    seed: 4,
  });
});

test("responsesEngineRequest keeps the row's kinds, makes float fields floats, and unpacks extra_body on request", () => {
  const { plain: request, kinded } = parseKinded(
    '{"model":"m","input":"hi","temperature":1,"top_p":1.0,"max_output_tokens":8,"metadata":{"extra_body":"{\\"seed\\": 3, \\"temperature\\": 0.5, \\"min_p\\": 0.0}"}}',
  );
  assert.equal(
    orjsonDumps(responsesEngineRequest(kinded as JsonDict)),
    '{"model":"m","input":"hi","temperature":1.0,"top_p":1.0,"max_output_tokens":8,"metadata":{"extra_body":"{\\"seed\\": 3, \\"temperature\\": 0.5, \\"min_p\\": 0.0}"}}',
  );
  const unpacked = orjsonDumps(responsesEngineRequest(kinded as JsonDict, { unpackExtraBody: true }));
  assert.match(unpacked, /^\{"seed":3,"temperature":1\.0,"min_p":0\.0,"model":"m",/);
  assert.deepEqual(plain(responsesEngineRequest(request as Item, { unpackExtraBody: true })), {
    seed: 3,
    min_p: 0,
    ...(request as Item),
    temperature: 1,
  });
  assert.deepEqual(plain(responsesEngineRequest({ input: 'hi' }, { unpackExtraBody: true })), { input: 'hi' });
  assert.throws(
    () => responsesEngineRequest({ input: 'hi', metadata: { extra_body: 'not json' } }, { unpackExtraBody: true }),
    /extra_body/,
  );
});

// NeMo Gym 0.4.0's own vllm_model, run in its venv: its `responses` route with the engine client
// replaced by one that records `orjson.dumps` of what it would post (NeMoGymAsyncOpenAI posts
// exactly that). Pydantic validates the row first, so an int in a float field arrives as a float.
const VLLM_MODEL_BODIES = `
import sys, asyncio, orjson
from responses_api_models.vllm_model.app import VLLMModel, VLLMModelConfig
from nemo_gym.openai_utils import NeMoGymResponseCreateParamsNonStreaming

class Recorded(Exception):
    pass

class RecordingClient:
    async def create_chat_completion(self, **kwargs):
        raise Recorded(orjson.dumps(kwargs))

config = VLLMModelConfig.model_construct(
    base_url=["http://127.0.0.1:1/v1"], api_key="unused", model="engine-model", return_token_id_information=False,
    uses_reasoning_parser=True, uses_interleaved_reasoning=False, replace_developer_role_with_system=False,
    chat_template_kwargs=None, extra_body=None, sequential_reasoning_allowed=True)
model = VLLMModel.model_construct(config=config)
model._converter = model.get_converter()
model._resolve_client = lambda request: RecordingClient()
for line in sys.stdin.buffer.read().splitlines():
    body = NeMoGymResponseCreateParamsNonStreaming.model_validate(orjson.loads(line))
    try:
        asyncio.run(model.responses(None, body))
    except Recorded as recorded:
        sys.stdout.buffer.write(recorded.args[0] + b"\\n")
`;

test("chat engine requests are byte-identical to what NeMo Gym 0.4.0's vllm_model posts", async () => {
  const schemaTool =
    '{"type":"function","name":"convert","description":"d","parameters":{"type":"object","properties":{"v":{"type":"number","minimum":1.0,"maximum":10,"multipleOf":0.5}}},"strict":true}';
  const lines = [
    `{"model":"engine-model","input":[{"role":"user","content":"hi"}],"temperature":1,"top_p":0.5,"max_output_tokens":64,"tools":[${schemaTool}],"tool_choice":"auto","parallel_tool_calls":false,"metadata":{"extra_body":"{\\"seed\\": 3, \\"repetition_penalty\\": 1.0, \\"n\\": 12345678901234567890}"}}`,
    `{"model":"engine-model","input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"convert","arguments":"{\\"v\\": 2.0}"},{"type":"function_call_output","call_id":"c1","output":"4.0"}],"temperature":0.0,"top_p":1.0,"tools":[${schemaTool}],"tool_choice":"required","metadata":{"chat_template_kwargs":"{\\"enable_thinking\\": false}","extra_body":"{\\"temperature\\": 2.5, \\"top_k\\": 20}"}}`,
    '{"model":"engine-model","input":"plain text","temperature":1.5}',
    '{"model":"engine-model","instructions":null,"input":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,AA==","detail":"low"}]}],"top_p":1}',
  ];
  const expected = (await runNemoGymPython(VLLM_MODEL_BODIES, lines.join('\n'))).trimEnd().split('\n');
  assert.equal(expected.length, lines.length);
  lines.forEach((line, i) => {
    const { plain: request, kinded } = parseKinded(line);
    assert.equal(
      orjsonDumps(responsesRequestToChat(request as Item, kinded as JsonDict)),
      expected[i],
      `request ${i + 1}`,
    );
  });
});

// The one documented difference from 0.4.0's bytes: an assistant turn without calls. NeMo Gym 0.4.0
// sends `"tool_calls":[]` on it, which OpenAI answers with 400; later NeMo Gym and we leave the key
// out (NVIDIA-NeMo/Gym#2515). Everything else in the body stays byte for byte 0.4.0's.
test('an assistant turn without calls: 0.4.0\'s body minus its "tool_calls":[] (NVIDIA-NeMo/Gym#2515)', async () => {
  const line =
    '{"model":"engine-model","input":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"again"}],"temperature":1.0}';
  const [nemoGym040] = (await runNemoGymPython(VLLM_MODEL_BODIES, line)).trimEnd().split('\n');
  assert.equal(nemoGym040!.split('"tool_calls":[]').length - 1, 1, nemoGym040);
  const { plain: request, kinded } = parseKinded(line);
  const ours = orjsonDumps(responsesRequestToChat(request as Item, kinded as JsonDict));
  assert.equal(ours.includes('"tool_calls"'), false);
  assert.equal(ours, nemoGym040!.replace(/,"tool_calls":\[\]|"tool_calls":\[\],/, ''));
});
