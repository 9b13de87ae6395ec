import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { singleStepExecutor } from '../../activities/chunk/executors/singleStep';
import { closePools } from '../../activities/http/client';
import { convertToCandidates } from '../../gym/convert';
import { JsonlWriter, readJsonl } from '../../gym/jsonl';
import { materializeOptionsSchema, materializeRows } from '../../gym/materialize';
import { readLocalProfile } from '../../gym/publishInputs';
import { writeRewardProfile } from '../../gym/rewardProfile';
import { expectedActionSchema, type MaterializedRow } from '../../gym/schemas';
import { verifyResponse } from '../../gym/verifier';
import { resolveComparatorConfig } from '../../gym/verifier/config';
import { ensureGemma, startLlamaServer, type LlamaServerHandle } from '../../scripts/lib/llamaServer';
import { materializedInput, writtenResult } from '../activities/chunk/executors/materializedInput';
import { fixturesDir } from '../helpers/fixtures';

// Local profiling with a real model: pivots cut by our converter from NeMo Gym's own example
// rollouts, K samples each from Gemma 3 270M on llama-server, scored by the built-in verifier and
// profiled as the pipeline does. Both model APIs the config offers are exercised.

const K = 4;
/** A fixture environment whose pivots have short prompts, so a loaded 2-core machine profiles them in minutes. */
const ENVIRONMENTS = ['example_single_tool_call'];
/** Pivots of each action type profiled; the environment has 3 function-call and 5 message pivots. */
const PIVOTS_PER_TYPE = 2;
/** As configs/demo_real_model.yaml: the pivots keep their tool_choice, a sample is cut after 64 tokens. */
const OVERRIDES = { max_output_tokens: 64 };
const comparatorConfig = resolveComparatorConfig({ word_count_similarity_threshold: 0.1 });

let server: LlamaServerHandle | undefined;
let dir: string;
let candidates: Array<Record<string, unknown>>;
let materialized: MaterializedRow[];
let materializedPath: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'real-model-'));
  server = await startLlamaServer({ install: ensureGemma(), logFile: path.join(dir, 'llama-server.log') });
  const converted = await convertToCandidates({
    inputs: ENVIRONMENTS.map((env) => path.join(fixturesDir, 'gym', env, 'example_rollouts.jsonl')),
    outDir: dir,
    agent_name: 'real_model_pivot_agent',
  });
  candidates = [];
  const perType = new Map<string, number>();
  for await (const { value } of readJsonl(converted.candidatesPath)) {
    const type = (value as { expected_action: { type: string } }).expected_action.type;
    if ((perType.get(type) ?? 0) >= PIVOTS_PER_TYPE) continue;
    perType.set(type, (perType.get(type) ?? 0) + 1);
    candidates.push(value as Record<string, unknown>);
  }
  const records = candidates.map((value, i) => ({
    value,
    line: i + 1,
    byteOffset: 0,
    byteLength: 0,
    text: JSON.stringify(value),
  }));
  const options = materializeOptionsSchema.parse({
    agent_name: 'real_model_pivot_agent',
    num_repeats: K,
    seed_per_repeat: true,
    responses_create_params: OVERRIDES,
  });
  materialized = [];
  for await (const row of materializeRows(records, options, 'candidates.jsonl')) materialized.push(row);
  materializedPath = path.join(dir, 'local_profile_materialized_inputs.jsonl');
  await writeRows(materializedPath, materialized);
});

after(async () => {
  await closePools();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function writeRows(file: string, rows: readonly unknown[]): Promise<void> {
  const writer = await JsonlWriter.open(file);
  for (const row of rows) await writer.write(row);
  await writer.close();
}

function executor(api: 'responses' | 'chat_completions') {
  return singleStepExecutor({
    modelUrl: server!.url,
    api,
    model: server!.modelName,
    timeoutMs: 180_000,
    maxConcurrency: server!.slots,
    comparatorConfig,
    // llama-server's /v1/responses reads only a top-level seed (config: local_profile.model.unpack_extra_body).
    unpackExtraBody: api === 'responses',
  });
}

type Sample = Record<string, unknown> & {
  response: { model?: string; output: Array<Record<string, unknown>>; usage?: { output_tokens?: number } };
  reward: number;
};

/** The model's action, without the ids llama-server draws afresh for every response. */
function action(sample: Sample): unknown[] {
  return sample.response.output.map(({ id: _id, call_id: _callId, ...rest }) => rest);
}

for (const api of ['responses', 'chat_completions'] as const) {
  test(`local profiling through ${api === 'responses' ? '/v1/responses' : '/v1/chat/completions'}: K real samples per pivot, verified and profiled`, async () => {
    assert.equal(
      candidates.length,
      2 * PIVOTS_PER_TYPE,
      `function-call and message pivots in ${ENVIRONMENTS.join(', ')}`,
    );
    const run = executor(api);
    const started = Date.now();
    const samples = (await Promise.all(
      materialized.map(async (row) =>
        writtenResult(await run.run(materializedInput(row), AbortSignal.timeout(600_000))),
      ),
    )) as Sample[];
    const seconds = (Date.now() - started) / 1000;

    // Every sample is a generation of the model, scored by the verifier against the pivot's action.
    const toolCalls = samples.filter((s) => s.response.output.some((item) => item.type === 'function_call')).length;
    for (const [i, sample] of samples.entries()) {
      const row = materialized[i]!;
      assert.deepEqual([sample._ng_task_index, sample._ng_rollout_index], [row._ng_task_index, row._ng_rollout_index]);
      assert.match(String(sample.response.model), /gemma/i);
      assert.ok((sample.response.usage?.output_tokens ?? 0) > 0, 'no generated tokens');
      assert.ok(sample.reward === 0 || sample.reward === 1, `reward ${sample.reward}`);
      const expected = expectedActionSchema.parse(row.expected_action);
      assert.equal(sample.reward, verifyResponse(expected, sample.response, comparatorConfig).reward);
    }

    // The reward profile of the samples is the pass rate each pivot gets.
    const rolloutsPath = path.join(dir, `local_profile_${api}.jsonl`);
    await writeRows(rolloutsPath, samples);
    const profile = await writeRewardProfile({ materializedInputsPath: materializedPath, rolloutsPath });
    const passRates = await readLocalProfile(profile.rewardProfilingPath, candidates.length);
    assert.equal(passRates.size, candidates.length);
    const histogram = new Map<number, number>();
    for (let task = 0; task < candidates.length; task++) {
      const rewards = samples.filter((s) => s._ng_task_index === task).map((s) => s.reward);
      assert.equal(rewards.length, K, `pivot ${task} has ${rewards.length} samples`);
      const stats = passRates.get(task)!;
      assert.equal(stats.num_samples, K);
      assert.equal(stats.pass_rate, rewards.reduce((a, b) => a + b, 0) / K);
      assert.equal(stats.min_reward, Math.min(...rewards));
      assert.equal(stats.max_reward, Math.max(...rewards));
      histogram.set(stats.pass_rate!, (histogram.get(stats.pass_rate!) ?? 0) + 1);
    }
    // Per-repeat seeds make K different draws, not K copies of one.
    const distinct = new Set(samples.map((s) => JSON.stringify(action(s))));
    assert.ok(
      distinct.size > candidates.length,
      `${distinct.size} distinct actions over ${candidates.length} pivots x K=${K}`,
    );
    const firstProfileRow = JSON.parse((await readFile(profile.rewardProfilingPath, 'utf8')).split('\n')[0]!) as Record<
      string,
      unknown
    >;
    assert.equal(firstProfileRow.num_rollouts, K);
    const rates = [...histogram]
      .sort(([a], [b]) => a - b)
      .map(([rate, n]) => `${rate}:${n}`)
      .join(' ');
    console.error(
      `[real-model] ${api}: ${candidates.length} pivots x K=${K} = ${samples.length} samples (${toolCalls} with a tool call) in ${seconds.toFixed(1)} s; pass rate:pivots ${rates}`,
    );
  });
}

/**
 * `row` asking llama-server not to reuse its prompt cache: a prompt found in the cache is evaluated
 * from its last token only, a path whose logits differ slightly from a whole evaluation, so the same
 * seed can sample another action (llama.cpp #4902, #2838; its maintainers' advice for determinism is
 * to turn the cache off). The flag goes where the seed goes, `metadata.extra_body`, which both APIs
 * send as top-level fields.
 */
function withoutPromptCache(row: MaterializedRow): MaterializedRow {
  const params = row.responses_create_params;
  const metadata = params.metadata as Record<string, string>;
  const extraBody = { ...(JSON.parse(metadata.extra_body!) as Record<string, unknown>), cache_prompt: false };
  return {
    ...row,
    responses_create_params: { ...params, metadata: { ...metadata, extra_body: JSON.stringify(extraBody) } },
  };
}

for (const api of ['responses', 'chat_completions'] as const) {
  // The two calls run one after the other: a slot batched with another request computes slightly
  // different logits, so only calls made alike are comparable.
  test(`the same per-repeat seed gives the same sample through ${api === 'responses' ? '/v1/responses' : '/v1/chat/completions'}`, async () => {
    const run = executor(api);
    const row = withoutPromptCache(materialized.find((r) => r._ng_rollout_index === 1)!);
    const first = writtenResult(await run.run(materializedInput(row), AbortSignal.timeout(300_000))) as Sample;
    const second = writtenResult(await run.run(materializedInput(row), AbortSignal.timeout(300_000))) as Sample;
    assert.deepEqual(
      action(second),
      action(first),
      `pivot ${row._ng_task_index}, seed 1 in metadata.extra_body: two calls sampled different actions, so the seed did not reach the engine`,
    );
    assert.equal(second.reward, first.reward);
  });
}
