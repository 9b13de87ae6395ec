import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { verifyResponse } from '../../gym/verifier';
import { ensureNemoGym, ngRunHeadPort, startNgRun, type RunningNgRun } from '../../scripts/lib/nemoGym';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// `local_profile.verifier: nemo_gym_agent`: local profiling samples every pivot through NeMo Gym
// 0.4.0's own tool_simulation_agent and single_step_tool_use_with_argument_comparison resources
// server (served by a real `ng_run`, its openai_model pointed at our seeded policy simulator), so the
// published pass rates are the ones NeMo Gym's verifier gives, not our port's.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-local-profile-agent';
const NEMO_GYM_AGENT = 'single_step_tool_use_with_argument_comparison_agent';
const NUM_SAMPLES = 8;
type Row = Record<string, any>;

let env: TestWorkflowEnvironment;
let baseDir: string;
let worker: ChildProcess;
let policy: EmbeddedStack;
let ngRun: RunningNgRun;

before(async () => {
  const install = ensureNemoGym();
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-local-profile-agent-'));
  policy = await startEmbeddedStack({ seed: 7 });
  ngRun = await startNgRun(install, {
    configPaths: [
      'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
      'responses_api_models/openai_model/configs/openai_model.yaml',
    ],
    headPort: await ngRunHeadPort(),
    overrides: [
      `+policy_base_url=${policy.urls.model}/v1`,
      '+policy_api_key=unused',
      '+policy_model_name=simulated-policy',
    ],
    cwd: baseDir,
    logFile: path.join(baseDir, 'ng_run.log'),
  });
  env = await startTestTemporal();
  worker = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    baseDir,
    artifactsRoot: path.join(baseDir, 'artifacts'),
  });
});

after(async () => {
  if (worker) await stopProcess(worker);
  await ngRun?.stop();
  await policy?.close();
  await env?.teardown();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

test(
  'local profiling through a NeMo Gym agent: its resources server scores every sample, and publish keeps its pass rates',
  { timeout: 600_000 },
  async () => {
    copyFileSync(
      path.join(repoRoot, 'configs/nemo_gym/travel_pivots.jsonl'),
      path.join(baseDir, 'travel_pivots.jsonl'),
    );
    const config = {
      name: 'local_profile_agent',
      seed: 7,
      servers: { mode: 'attach', head_url: ngRun.headUrl },
      collect: { input_jsonl: 'travel_pivots.jsonl', agent_name: NEMO_GYM_AGENT, num_repeats: 4 },
      local_profile: { num_samples: NUM_SAMPLES, verifier: 'nemo_gym_agent', agent_name: NEMO_GYM_AGENT },
      publish: { dataset_name: 'local_profile_agent_pivots' },
    };
    writeFileSync(path.join(baseDir, 'config.yaml'), YAML.stringify(config));

    const result = await runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'config.yaml',
      runId: 'local-profile-agent',
    });

    const inputs = readJsonlSync<Row>(path.join(result.runDir, 'local_profile_materialized_inputs.jsonl'));
    const samples = readJsonlSync<Row>(path.join(result.runDir, 'local_profile.jsonl'));
    assert.equal(samples.length, inputs.length, 'every pivot × K sample has a rollout');
    const uuidOfTask = new Map(inputs.map((r) => [r._ng_task_index as number, r.provenance.uuid as string]));
    const rewardsByUuid = new Map<string, number[]>();
    for (const s of samples) {
      // NeMo Gym's resources server answers with its pydantic request model dumped whole: its verdict
      // (`category`) and every optional create param, null-filled, which our materialized rows lack.
      assert.equal(typeof s.category, 'string', "the verdict of NeMo Gym's resources server");
      assert.ok('previous_response_id' in s.responses_create_params, 'responses_create_params as NeMo Gym dumps it');
      assert.ok(!('previous_response_id' in inputs[0]!.responses_create_params));
      assert.equal(
        s.reward,
        verifyResponse(s.expected_action, s.response, { word_count_similarity_threshold: 0.1 }).reward,
      );
      const uuid = uuidOfTask.get(s._ng_task_index)!;
      rewardsByUuid.set(uuid, [...(rewardsByUuid.get(uuid) ?? []), s.reward as number]);
    }
    assert.ok(
      samples.some((s) => s.reward === 1) && samples.some((s) => s.reward === 0),
      'the policy both passes and fails',
    );

    assert.equal(result.validatorExitCode, 0);
    const pivots = readJsonlSync<Row>(result.pivotsPath);
    assert.ok(pivots.length > 0, 'pivots were published');
    for (const p of pivots) {
      const rewards = rewardsByUuid.get(p.provenance.uuid) ?? [];
      assert.equal(rewards.length, NUM_SAMPLES, `${p.provenance.uuid}: K samples`);
      assert.equal(p.provenance.local_num_samples, NUM_SAMPLES);
      assert.equal(
        p.provenance.local_pass_rate,
        rewards.reduce((a, b) => a + b, 0) / NUM_SAMPLES,
        `${p.provenance.uuid}: NeMo Gym's pass rate`,
      );
    }
  },
);
