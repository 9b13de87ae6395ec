import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { verifyResponse } from '../../gym/verifier';
import {
  ensureNemoGym,
  ngRunHeadPort,
  runNemoGymCommand,
  startNgRun,
  type NemoGymInstall,
  type RunningNgRun,
} from '../../scripts/lib/nemoGym';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { SIMULATED_MODEL_NAME } from '../../servers/policySimulator';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// One input file, two NeMo Gym 0.4.0 agents behind one real `ng_run`: rows naming NeMo Gym's
// tool_simulation_agent are answered by our seeded policy simulator and verified by NeMo Gym's
// argument-comparison resources server; rows naming its stirrup_agent (judge_only, see
// configs/nemo_gym/stirrup_judge_only_agent.yaml) never reach the policy: with cached deliverables
// they are verified from a placeholder response, without them the agent itself reports the rollout
// as failed (`_ng_failure_class: skipped`, terminal), which must land in the failures sidecar.
// NeMo Gym's own `gym eval aggregate`, asking the same agents, writes the same aggregate metrics.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-two-agents';
const TOOL_AGENT = 'single_step_tool_use_with_argument_comparison_agent';
const STIRRUP_AGENT = 'stirrup_judge_only_agent';
const NUM_REPEATS = 2;
type Row = Record<string, any>;

let install: NemoGymInstall;
let env: TestWorkflowEnvironment;
let baseDir: string;
let worker: ChildProcess;
let policy: EmbeddedStack;
let ngRun: RunningNgRun;

const ref = (name: string) => ({ type: 'responses_api_agents', name });

/** Deliverables stirrup_agent finds for `taskId` in judge_only mode, one folder per repeat. */
function cacheDeliverables(dir: string, taskId: string): void {
  for (let repeat = 0; repeat < NUM_REPEATS; repeat++) {
    const folder = path.join(dir, `task_${taskId}`, `repeat_${repeat}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'answer.txt'), 'cached deliverable\n');
  }
}

before(async () => {
  install = ensureNemoGym();
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-two-agents-'));
  const deliverables = path.join(baseDir, 'deliverables');
  cacheDeliverables(deliverables, 'cached');
  policy = await startEmbeddedStack({ seed: 7 });
  env = await startTestTemporal();
  // The worker bundles its workflows while ng_run brings its servers up; neither needs the other yet.
  worker = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    baseDir,
    artifactsRoot: path.join(baseDir, 'artifacts'),
  });
  ngRun = await startNgRun(install, {
    configPaths: [
      'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
      'responses_api_models/openai_model/configs/openai_model.yaml',
      path.join(repoRoot, 'configs/nemo_gym/stirrup_judge_only_agent.yaml'),
    ],
    headPort: await ngRunHeadPort(),
    overrides: [
      `+policy_base_url=${policy.urls.model}/v1`,
      '+policy_api_key=unused',
      '+policy_model_name=simulated-policy',
      `+stirrup_deliverables_dir=${deliverables}`,
    ],
    cwd: baseDir,
    logFile: path.join(baseDir, 'ng_run.log'),
    // The first run builds stirrup_agent's server venv (cached for every later run).
    readyTimeoutMs: 1_500_000,
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
  'rows route to their own NeMo Gym agent; its failure markers land in the sidecar; gym eval aggregate writes the same metrics',
  { timeout: 1_800_000 },
  async () => {
    const travel = readJsonlSync<Row>(path.join(repoRoot, 'configs/nemo_gym/travel_pivots.jsonl'));
    // The same task through stirrup_agent: gdpval rows carry task_id and prompt.
    const stirrupRow = (taskId: string) => ({
      ...travel[0]!,
      task_id: taskId,
      prompt: 'Report the temperature.',
      agent_ref: ref(STIRRUP_AGENT),
    });
    const rows = [
      stirrupRow('cached'),
      ...travel.map((r) => ({ ...r, agent_ref: ref(TOOL_AGENT) })),
      stirrupRow('missing'),
    ];
    writeFileSync(path.join(baseDir, 'two_agents.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const config = {
      name: 'two_agents',
      seed: 7,
      servers: { mode: 'attach', head_url: ngRun.headUrl },
      // No agent_name: as in NeMo Gym 0.7.0, it would re-route every row; each row names its own agent.
      collect: { input_jsonl: 'two_agents.jsonl', num_repeats: NUM_REPEATS, chunk_size: 4 },
      // The failed task has no rollout at all, so the profile leaves it out instead of refusing.
      // NeMo Gym 0.4.0's files, to compare with its own `gym eval aggregate`.
      profile: { allow_partial_rollouts: true, nemo_gym_version: '0.4.0' },
      local_profile: { num_samples: 8 },
      publish: { dataset_name: 'two_agents_pivots' },
    };
    writeFileSync(path.join(baseDir, 'config.yaml'), YAML.stringify(config));

    const result = await runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'config.yaml',
      runId: 'two-agents',
    });

    const inputs = readJsonlSync<Row>(path.join(result.runDir, 'rollouts_materialized_inputs.jsonl'));
    const taskOf = (taskId: string) => inputs.find((r) => r.task_id === taskId)!._ng_task_index as number;
    const [cached, missing] = [taskOf('cached'), taskOf('missing')];
    const rollouts = readJsonlSync<Row>(path.join(result.runDir, 'rollouts.jsonl'));
    assert.equal(rollouts.length, (rows.length - 1) * NUM_REPEATS, 'every row but the failed one has its rollouts');

    for (const r of rollouts) {
      const where = `${r._ng_task_index}:${r._ng_rollout_index}`;
      if (r._ng_task_index === cached) {
        // stirrup_agent judged the cached deliverable: its placeholder, never the policy's answer.
        assert.deepEqual(r.agent_ref, ref(STIRRUP_AGENT), where);
        assert.equal(r.response.id, 'gdpval-cached', where);
        assert.match(r.response.output[0].content[0].text, /^Judge-only mode/, where);
        assert.equal(r.category, 'No tool call was found when one was expected', where);
        assert.equal(r.reward, 0, where);
      } else {
        assert.deepEqual(r.agent_ref, ref(TOOL_AGENT), where);
        assert.equal(r.response.model, SIMULATED_MODEL_NAME, where);
        assert.equal(
          r.reward,
          verifyResponse(r.expected_action, r.response, { word_count_similarity_threshold: 0.1 }).reward,
          where,
        );
      }
    }
    assert.ok(
      rollouts.every((r) => r._ng_task_index !== missing),
      'the failed task has no line in rollouts.jsonl',
    );

    // stirrup_agent's own failure payload, one line per repeat, never retried (it is terminal).
    const failures = readJsonlSync<Row>(path.join(result.runDir, 'rollouts_failures.jsonl'));
    assert.deepEqual(
      failures.map((f) => `${f._ng_task_index}:${f._ng_rollout_index}`).sort(),
      Array.from({ length: NUM_REPEATS }, (_, i) => `${missing}:${i}`),
    );
    for (const f of failures) {
      assert.equal(f._ng_failure_class, 'skipped');
      assert.equal(f._ng_failure_terminal, true);
      assert.equal(f.attempt, 1);
      assert.deepEqual(f.agent_ref, ref(STIRRUP_AGENT));
      assert.match(f.error_message, /^judge_only: no cached deliverables at .*task_missing/);
    }

    // One entry per agent that completed rollouts, from that agent's POST /aggregate_metrics.
    const entries = JSON.parse(
      readFileSync(path.join(result.runDir, 'rollouts_aggregate_metrics.json'), 'utf8'),
    ) as Row[];
    assert.deepEqual(entries.map((e) => e.agent_ref.name).sort(), [STIRRUP_AGENT, TOOL_AGENT].sort());
    const stirrupEntry = entries.find((e) => e.agent_ref.name === STIRRUP_AGENT)!;
    assert.equal(stirrupEntry.agent_metrics['mean/reward'], 0);
    assert.equal(stirrupEntry.group_level_metrics.length, 1, 'only the cached task completed through stirrup_agent');
    const ngDir = path.join(baseDir, 'gym_eval_aggregate');
    mkdirSync(ngDir);
    const { code, output } = await runNemoGymCommand(
      install,
      'gym',
      [
        'eval',
        'aggregate',
        '-i',
        path.join(result.runDir, 'rollouts.jsonl'),
        '-o',
        path.join(ngDir, 'rollouts.jsonl'),
        '+merge_shards=false',
        '+head_server.host=127.0.0.1',
        `+head_server.port=${new URL(ngRun.headUrl).port}`,
      ],
      ngDir,
    );
    assert.equal(code, 0, output);
    // Bytes, not values: a `0.0` NeMo Gym writes must not come out `0`. Entry by entry, because NeMo
    // Gym lists agents in the order their answers complete (asyncio.as_completed).
    const entryTexts = (file: string) =>
      readFileSync(file, 'utf8')
        .replace(/^\[\n|\n\]$/g, '')
        .split(/(?<=\n {2}\}),\n/)
        .sort();
    const ours = entryTexts(path.join(result.runDir, 'rollouts_aggregate_metrics.json'));
    assert.equal(ours.length, 2);
    assert.deepEqual(
      ours,
      entryTexts(path.join(ngDir, 'rollouts_aggregate_metrics.json')),
      "NeMo Gym's aggregate metrics",
    );

    assert.equal(result.validatorExitCode, 0);
    const pivots = readJsonlSync<Row>(result.pivotsPath);
    assert.ok(pivots.length > 0, 'pivots were published');
    for (const p of pivots)
      assert.notEqual(p.provenance.task_index, cached, "stirrup_agent's zero-reward rollouts yield no pivot");
  },
);
