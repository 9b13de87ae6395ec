import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { verifyResponse } from '../../gym/verifier';
import { portOpen } from '../../scripts/lib/net';
import { ensureNemoGym, ngRunCommand, ngRunHeadPort, type NemoGymInstall } from '../../scripts/lib/nemoGym';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// `servers.mode: spawn` with the real thing: the worker runs NeMo Gym 0.4.0's `ng_run` on NeMo Gym's
// own config files (tool_simulation_agent + single_step_tool_use_with_argument_comparison, and its
// openai_model pointed at our seeded policy simulator), collects through those servers, then
// converts, profiles locally and publishes; ng_run is stopped when the run ends.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-spawn-ng-run';
const NEMO_GYM_AGENT = 'single_step_tool_use_with_argument_comparison_agent';
const NUM_REPEATS = 4;
type Row = Record<string, any>;

let install: NemoGymInstall;
let env: TestWorkflowEnvironment;
let baseDir: string;
let worker: ChildProcess;
let policy: EmbeddedStack;

before(async () => {
  install = ensureNemoGym();
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-spawn-ng-run-'));
  env = await startTestTemporal();
  policy = await startEmbeddedStack({ seed: 7 });
  worker = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    baseDir,
    artifactsRoot: path.join(baseDir, 'artifacts'),
  });
});

after(async () => {
  if (worker) await stopProcess(worker);
  await policy?.close();
  await env?.teardown();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

test(
  'the pipeline spawns ng_run, collects through NeMo Gym servers, publishes, and stops ng_run',
  { timeout: 900_000 },
  async () => {
    copyFileSync(
      path.join(repoRoot, 'configs/nemo_gym/travel_pivots.jsonl'),
      path.join(baseDir, 'travel_pivots.jsonl'),
    );
    const headPort = await ngRunHeadPort();
    const config = {
      name: 'nemo_gym_spawn',
      seed: 7,
      servers: {
        mode: 'spawn',
        command: ngRunCommand(install, {
          configPaths: [
            'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
            'responses_api_models/openai_model/configs/openai_model.yaml',
          ],
          headPort,
          overrides: [
            `+policy_base_url=${policy.urls.model}/v1`,
            '+policy_api_key=unused',
            '+policy_model_name=simulated-policy',
          ],
        }),
        head_url: `http://127.0.0.1:${headPort}`,
        ready_timeout_s: 600,
      },
      collect: {
        input_jsonl: 'travel_pivots.jsonl',
        agent_name: NEMO_GYM_AGENT,
        num_repeats: NUM_REPEATS,
        chunk_size: 8,
        max_attempts: 5,
      },
      local_profile: { num_samples: 8 },
      publish: { dataset_name: 'nemo_gym_spawn_pivots' },
    };
    writeFileSync(path.join(baseDir, 'spawn.yaml'), YAML.stringify(config));

    const result = await runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'spawn.yaml',
      runId: 'spawn-ng-run',
    });

    assert.equal(await portOpen(headPort), false, 'ng_run (its head server) is stopped after the run');
    // Each of ng_run's three servers started under it. Not ng_run's own "servers ready!": it checks
    // every few seconds, and the pipeline, which checks the servers itself, can finish this small run
    // and stop ng_run between two of those checks (CI at 2026-11-26 09:48 did).
    const serversLog = readFileSync(path.join(result.runDir, 'servers.log'), 'utf8');
    for (const server of [
      'policy_model',
      NEMO_GYM_AGENT,
      'single_step_tool_use_with_argument_comparison_resources_server',
    ]) {
      assert.match(
        serversLog,
        new RegExp(`\\(${server}\\) INFO: +Uvicorn running on http://127\\.0\\.0\\.1:\\d+`),
        server,
      );
    }

    // Every rollout came from NeMo Gym's tool_simulation_agent: its resources server's verdict
    // (`category`) rides along, and its reward is the one our verifier gives the same response.
    const tasks = readJsonlSync<Row>(path.join(baseDir, 'travel_pivots.jsonl'));
    const rollouts = readJsonlSync<Row>(path.join(result.runDir, 'rollouts.jsonl'));
    assert.equal(rollouts.length, tasks.length * NUM_REPEATS, 'every materialized row has a rollout');
    for (const r of rollouts) {
      assert.equal(typeof r.category, 'string', "the verdict of NeMo Gym's resources server");
      const ours = verifyResponse(r.expected_action, r.response, { word_count_similarity_threshold: 0.1 });
      assert.equal(r.reward, ours.reward, `${r._ng_task_index}:${r._ng_rollout_index}: NeMo Gym's reward = ours`);
    }
    assert.ok(
      rollouts.some((r) => r.reward === 1) && rollouts.some((r) => r.reward === 0),
      'the policy both passes and fails',
    );

    assert.equal(result.validatorExitCode, 0);
    const pivots = readJsonlSync<Row>(result.pivotsPath);
    assert.ok(pivots.length > 0, 'pivots were published');
    const gymConfig = YAML.parse(readFileSync(result.gymConfigPath, 'utf8')) as Row;
    for (const p of pivots) {
      assert.ok(p.provenance.local_pass_rate > 0 && p.provenance.local_pass_rate < 1, 'only mixed pivots');
      assert.ok(gymConfig[p.agent_ref.name]?.responses_api_agents, "rows route to the generated config's agent");
    }
  },
);
