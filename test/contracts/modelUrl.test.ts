import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pipelineConfigSchema } from '../../contracts/config';

// local_profile.model.url takes one URL, as before, or a list of replicas, as NeMo Gym's vllm_model
// takes base_url.

const config = (url: unknown) => ({
  name: 'replicas',
  collect: { input_jsonl: 'tasks.jsonl', agent_name: 'agent' },
  local_profile: { model: { url } },
});

test('one URL stays a string; a list of replicas stays a list', () => {
  assert.equal(
    pipelineConfigSchema.parse(config('http://10.0.0.1:8000/v1')).local_profile.model.url,
    'http://10.0.0.1:8000/v1',
  );
  assert.deepEqual(
    pipelineConfigSchema.parse(config(['http://10.0.0.1:8000/v1', 'http://10.0.0.2:8000/v1'])).local_profile.model.url,
    ['http://10.0.0.1:8000/v1', 'http://10.0.0.2:8000/v1'],
  );
});

test('a list naming one host:port twice, an empty list or a non-URL is refused', () => {
  const issues = (url: unknown) =>
    pipelineConfigSchema
      .safeParse(config(url))
      .error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('\n') ?? '';
  assert.match(
    issues(['http://10.0.0.1:8000/v1', 'http://10.0.0.1:8000/other']),
    /local_profile\.model\.url: .*each replica needs its own host:port/s,
  );
  assert.match(issues([]), /local_profile\.model\.url/);
  assert.match(issues(['http://10.0.0.1:8000', 'not a url']), /local_profile\.model\.url/);
});
