import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { prepareRun } from '../../activities/run/prepare';
import type { CollectStageResult } from '../../contracts/payloads';
import { readJsonlSync } from '../helpers/jsonl';
import { causeMessages, checksums } from '../helpers/runDir';
import { runPivotMining, startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// The failures sidecar on a real Temporal server: faults injected in front of the embedded agent
// are recovered by per-request retries (one failure line per failed attempt), a row that always
// fails lands in rollouts_failures.jsonl after max_attempts, a resumed run does not retry it (and a
// resume under another config is refused), and the reward profile reports it missing (partial) or
// refuses with NeMo Gym's message (strict).

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-failures-test';
const NUM_TASKS = 6;
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let baseDir: string;

function writeConfig(file: string, allowPartial: boolean): void {
  const config = {
    name: 'failures',
    seed: 7,
    servers: {
      mode: 'embedded',
      faults: {
        events_jsonl: 'fault_events.jsonl',
        agent: {
          hang_ms: 60_000,
          rules: [
            { match: { _ng_task_index: 0, _ng_rollout_index: 0 }, kind: 'hang', times: 1 },
            { match: { _ng_task_index: 1 }, kind: 'http_5xx', times: 2 },
            { match: { _ng_task_index: 2 }, kind: 'http_429', times: 1 },
            { match: { _ng_task_index: 3, _ng_rollout_index: 1 }, kind: 'http_5xx' },
            { match: { _ng_task_index: 4 }, kind: 'torn_json', times: 1 },
            { match: { _ng_task_index: 5 }, kind: 'reset', times: 1 },
          ],
        },
      },
    },
    collect: {
      input_jsonl: 'tasks.jsonl',
      agent_name: 'demo_tool_agent',
      num_repeats: 2,
      chunk_size: 4,
      // Generous for a loaded CI machine; only the injected hang should ever reach it.
      request_timeout_ms: 8_000,
    },
    profile: { allow_partial_rollouts: allowPartial },
  };
  writeFileSync(path.join(baseDir, file), YAML.stringify(config));
}

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-failures-'));
  const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8').split('\n').slice(0, NUM_TASKS);
  writeFileSync(path.join(baseDir, 'tasks.jsonl'), `${tasks.join('\n')}\n`);
  writeConfig('partial.yaml', true);
  writeConfig('strict.yaml', false);
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

type Row = Record<string, any>;
const key = (r: Row) => `${r._ng_task_index}:${r._ng_rollout_index}`;

test(
  'transient faults are retried, a permanent one lands in the sidecar once and is not retried on resume',
  { timeout: 300_000 },
  async () => {
    const runId = 'faulty';
    const plan = await prepareRun(
      { baseDir, artifactsRoot: path.join(baseDir, 'artifacts') },
      { config_path: 'partial.yaml', run_id: runId },
      runId,
    );
    const outPrefix = path.join(plan.runDir, 'rollouts');
    const collected = (await env.client.workflow.execute('collectRolloutsWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: `failures-${runId}/collect`,
      args: [{ plan, stage: 'collect', inputPath: plan.config.collect.input_jsonl, outPrefix }],
    })) as CollectStageResult;

    // Every rollout except the always-failing one is present, in materialized order.
    const rollouts = readJsonlSync<Row>(`${outPrefix}.jsonl`);
    const expectedKeys = Array.from({ length: NUM_TASKS * 2 }, (_, i) => `${Math.floor(i / 2)}:${i % 2}`).filter(
      (k) => k !== '3:1',
    );
    assert.deepEqual(rollouts.map(key), expectedKeys);
    assert.equal(collected.merge.completed, expectedKeys.length);
    assert.equal(collected.merge.failedKeys, 1);
    // Every expected rollout accounted for once: 11 succeeded (9 of them after failed attempts), one
    // failed for good with the class of its last attempt.
    assert.deepEqual(collected.accounting, {
      expected: NUM_TASKS * 2,
      succeeded: 11,
      failed: 1,
      failed_by_class: { http_5xx: 1 },
      terminal: 1,
      omitted: 0,
      failed_attempts: 14,
      recovered: 9,
    });

    // One failure line per failed attempt, classified by what the client saw.
    const failureLines = readJsonlSync<Row>(`${outPrefix}_failures.jsonl`);
    assert.deepEqual(
      failureLines.map((f) => `${key(f)}#${f.attempt} ${f.failure_class}`),
      [
        '0:0#1 timeout',
        '1:0#1 http_5xx',
        '1:0#2 http_5xx',
        '1:1#1 http_5xx',
        '1:1#2 http_5xx',
        '2:0#1 http_429',
        '2:1#1 http_429',
        '3:1#1 http_5xx',
        '3:1#2 http_5xx',
        '3:1#3 http_5xx',
        '4:0#1 invalid_response',
        '4:1#1 invalid_response',
        '5:0#1 connection',
        '5:1#1 connection',
      ],
    );
    for (const f of failureLines) assert.equal(typeof f.error, 'string');
    const events = readJsonlSync<Row>(path.join(baseDir, 'fault_events.jsonl'));
    assert.equal(events.length, failureLines.length);

    // Partial mode: the task with a missing rollout is profiled on what completed and says so.
    const profile = readJsonlSync<Row>(`${outPrefix}_reward_profiling.jsonl`);
    assert.equal(profile.length, NUM_TASKS);
    const task3 = profile.find((p) => p._ng_task_index === 3)!;
    assert.equal(task3.num_rollouts, 1);
    assert.equal(task3.expected_num_rollouts, 2);
    assert.equal(task3.missing_num_rollouts, 1);
    assert.equal(task3.reward_profile_completion_pct, 50);
    for (const p of profile.filter((p) => p._ng_task_index !== 3)) assert.equal(p.missing_num_rollouts, 0);

    // Resuming the run under another config is refused before anything in its directory changes,
    // naming the difference (here: the profile mode).
    const before = checksums(plan.runDir);
    const otherConfig = runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'strict.yaml',
      runId,
      workflowId: `failures-${runId}-strict`,
    });
    await assert.rejects(otherConfig, (err: Error) => {
      assert.match(causeMessages(err), /profile\.allow_partial_rollouts: true -> false/);
      return true;
    });
    assert.deepEqual(checksums(plan.runDir), before);

    // Resumed under its own config, the shards are reused and the exhausted key is not tried again.
    await env.client.workflow.execute('collectRolloutsWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: `failures-${runId}/collect-resumed`,
      args: [{ plan, stage: 'collect', inputPath: plan.config.collect.input_jsonl, outPrefix }],
    });
    assert.equal(readJsonlSync<Row>(`${outPrefix}_failures.jsonl`).length, failureLines.length);
    assert.equal(readJsonlSync<Row>(path.join(baseDir, 'fault_events.jsonl')).length, events.length);
    assert.deepEqual(readJsonlSync<Row>(`${outPrefix}.jsonl`).map(key), expectedKeys);

    // Strict profiling of a run with a missing rollout refuses with NeMo Gym's message.
    const strict = runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'strict.yaml',
      runId: `${runId}-strict`,
      workflowId: `failures-${runId}-strict-run`,
    });
    await assert.rejects(strict, (err: Error) => {
      const all = causeMessages(err);
      assert.match(all, /Materialized input rows and rollout results do not have matching rollout keys/);
      assert.match(all, /Missing rollout keys: .*3.*1/);
      return true;
    });
  },
);
