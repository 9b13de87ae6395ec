import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { PivotMiningResult } from '../../contracts/payloads';
import {
  ensureNemoGym,
  ngRunHeadPort,
  runNemoGymCommand,
  startNgRun,
  type NemoGymInstall,
  type RunningNgRun,
} from '../../scripts/lib/nemoGym';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// The evidence that a published dataset is right: NeMo Gym 0.4.0 itself serves the generated Gym
// config (tool_simulation_agent + single_step_tool_use_with_argument_comparison) against the same
// seeded policy, re-measures every pivot with the same K and seeds, prepares the data, and profiles
// the pipeline's own rollouts into the very bytes the pipeline wrote.

const TASK_QUEUE = 'pivot-mining-nemo-gym-consumes';
const DEMO_SEED = 7;
type Row = Record<string, any>;

let install: NemoGymInstall;
let stack: WorkerTestEnv;
let workDir: string;
let result: PivotMiningResult;
let policy: EmbeddedStack;
let ngRun: RunningNgRun;

before(async () => {
  install = ensureNemoGym();
  workDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-nemo-gym-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: path.join(workDir, 'artifacts') });
  result = await runPivotMining(stack.env.client, {
    taskQueue: TASK_QUEUE,
    configPath: 'configs/demo.yaml',
    runId: 'demo',
    workflowId: 'nemo-gym-consumes',
  });
  // The policy local profiling measured with (the demo's embedded simulator), now behind NeMo Gym's
  // own OpenAI model server.
  policy = await startEmbeddedStack({ seed: DEMO_SEED });
  const headPort = await ngRunHeadPort();
  ngRun = await startNgRun(install, {
    configPaths: [result.gymConfigPath, 'responses_api_models/openai_model/configs/openai_model.yaml'],
    headPort,
    overrides: [
      `+policy_base_url=${policy.urls.model}/v1`,
      '+policy_api_key=unused',
      '+policy_model_name=simulated-policy',
    ],
    cwd: workDir,
    logFile: path.join(workDir, 'ng_run.log'),
  });
});

after(async () => {
  await ngRun?.stop();
  await policy?.close();
  await stack?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test(
  'NeMo Gym re-measures every published pivot at the pass rate in its provenance',
  { timeout: 900_000 },
  async () => {
    const pivots = readJsonlSync<Row>(result.pivotsPath);
    assert.ok(pivots.length >= 3, `the demo publishes pivots (${pivots.length})`);
    const k = pivots[0]!.provenance.local_num_samples as number;
    assert.ok(pivots.every((p) => p.provenance.local_num_samples === k));
    const out = path.join(workDir, 'nemo_gym_rollouts.jsonl');
    const collected = await runNemoGymCommand(
      install,
      'ng_collect_rollouts',
      [
        `+head_server={host:127.0.0.1,port:${new URL(ngRun.headUrl).port}}`,
        `+input_jsonl_fpath=${result.pivotsPath}`,
        `+output_jsonl_fpath=${out}`,
        `+num_repeats=${k}`,
        '+num_repeats_add_seed=true',
        '+num_samples_in_parallel=16',
      ],
      workDir,
    );
    assert.equal(collected.code, 0, collected.output.slice(-3000));

    const rollouts = readJsonlSync<Row>(out);
    assert.equal(rollouts.length, pivots.length * k, 'one rollout per pivot × K, none failed');
    const rewards = new Map<number, number[]>();
    for (const r of rollouts) {
      assert.equal(r.agent_ref.name, pivots[0]!.agent_ref.name);
      rewards.set(r._ng_task_index, [...(rewards.get(r._ng_task_index) ?? []), r.reward as number]);
    }
    pivots.forEach((pivot, task) => {
      const got = rewards.get(task) ?? [];
      assert.equal(got.length, k, `pivot ${task}: K rollouts`);
      const passRate = got.reduce((a, b) => a + b, 0) / k;
      assert.equal(
        passRate,
        pivot.provenance.local_pass_rate,
        `pivot ${task} (${pivot.provenance.uuid}): NeMo Gym's pass rate`,
      );
    });
  },
);

test('ng_prepare_data accepts the generated config and the published pivots', { timeout: 300_000 }, async () => {
  const prepared = await runNemoGymCommand(
    install,
    'ng_prepare_data',
    [
      `+config_paths=[${result.gymConfigPath}]`,
      `+output_dirpath=${path.join(workDir, 'prepared')}`,
      '+mode=train_preparation',
      '+should_download=false',
    ],
    workDir,
  );
  assert.equal(prepared.code, 0, prepared.output.slice(-3000));
  const trainFile = path.join(workDir, 'prepared', 'train.jsonl');
  assert.equal(readJsonlSync(trainFile).length, readJsonlSync(result.pivotsPath).length);
});

for (const stem of ['rollouts', 'local_profile']) {
  test(
    `ng_reward_profile 0.7.0 on the run's ${stem} files writes the run's profile files byte for byte`,
    { timeout: 600_000 },
    async () => {
      const dir = path.join(workDir, `profile_${stem}`);
      mkdirSync(dir, { recursive: true });
      copyFileSync(path.join(result.runDir, `${stem}.jsonl`), path.join(dir, `${stem}.jsonl`));
      const profiled = await runNemoGymCommand(
        ensureNemoGym('0.7.0'),
        'ng_reward_profile',
        [
          `+materialized_inputs_jsonl_fpath=${path.join(result.runDir, `${stem}_materialized_inputs.jsonl`)}`,
          `+rollouts_jsonl_fpath=${path.join(dir, `${stem}.jsonl`)}`,
        ],
        workDir,
      );
      assert.equal(profiled.code, 0, profiled.output.slice(-3000));
      // Every file it wrote, which must be the three 0.7.0 writes.
      const files = readdirSync(dir)
        .filter((f) => f !== `${stem}.jsonl`)
        .sort();
      assert.deepEqual(
        files,
        ['_agent_metrics.json', '_repeat_level_metrics.json', '_reward_profiling.jsonl'].map((f) => `${stem}${f}`),
      );
      for (const file of files) {
        const theirs = readFileSync(path.join(dir, file));
        const ours = readFileSync(path.join(result.runDir, file));
        assert.ok(theirs.length > 0);
        assert.ok(
          ours.equals(theirs),
          `${file} differs from NeMo Gym's:\nours:   ${ours.toString().slice(0, 600)}\ntheirs: ${theirs.toString().slice(0, 600)}`,
        );
      }
      // The demo collects several repeats a task, so 0.7.0's additions are there to compare.
      assert.match(readFileSync(path.join(dir, `${stem}_agent_metrics.json`), 'utf8'), /_across_repeats\//);
    },
  );
}
