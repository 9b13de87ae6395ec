import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { accountingProblems } from '../../gym/rolloutAccounting';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// Exact accounting on a faulty run: the model answers 500 to some local-profile samples, which with
// one attempt each fail for good. Every expected rollout of both stages is counted once in
// run_summary.json and the counts add up; no failed sample enters a pass rate as reward 0; a pivot
// left with fewer samples than num_samples is held back and counted, never published as complete.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-accounting-test';
const NUM_SAMPLES = 8;
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let baseDir: string;

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-accounting-'));
  writeFileSync(path.join(baseDir, 'tasks.jsonl'), readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl')));
  const config = {
    name: 'accounting',
    seed: 7,
    servers: { mode: 'embedded', faults: { model: { rate: 0.06, kinds: ['http_5xx'], max_faults_per_request: 100 } } },
    collect: { input_jsonl: 'tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: 4, chunk_size: 16 },
    local_profile: { num_samples: NUM_SAMPLES, max_attempts: 1, chunk_size: 64 },
    publish: { dataset_name: 'accounting_pivots' },
  };
  writeFileSync(path.join(baseDir, 'faulty.yaml'), YAML.stringify(config));
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

type Row = Record<string, any>;

test(
  'a faulty run accounts for every rollout, keeps failures out of pass rates and holds back incomplete pivots',
  { timeout: 600_000 },
  async () => {
    const result = await runPivotMining(env.client, {
      taskQueue: TASK_QUEUE,
      configPath: 'faulty.yaml',
      runId: 'faulty',
    });
    const summary = JSON.parse(readFileSync(path.join(result.runDir, 'run_summary.json'), 'utf8'));
    assert.equal(result.runSummaryPath, path.join(result.runDir, 'run_summary.json'));

    // Both stages add up, and the summary says what the workflow result and progress counts say.
    for (const stage of ['collect', 'local_profile']) {
      const a = summary.stages[stage];
      assert.deepEqual(accountingProblems(a), [], stage);
      assert.equal(a.adds_up, true);
      assert.equal(a.expected, a.succeeded + a.failed + a.omitted);
      assert.equal(
        a.failed,
        Object.values<number>(a.failed_by_class).reduce((s, n) => s + n, 0),
      );
      const { adds_up: _a, problems: _p, ...plain } = a;
      assert.deepEqual(plain, result.accounting![stage]);
      assert.equal(result.counts[`${stage}.expected`], a.expected);
    }
    const lp = summary.stages.local_profile;
    assert.ok(lp.failed > 0, 'the injected 500s failed some samples');
    assert.deepEqual(Object.keys(lp.failed_by_class), ['http_5xx']);
    assert.equal(lp.terminal, lp.failed, 'with one attempt every failure is final');
    assert.equal(lp.omitted, 0);
    assert.equal(lp.expected, result.counts.candidates! * NUM_SAMPLES);
    assert.equal(summary.stages.collect.failed, 0, 'the agent path had no faults');

    // No failure enters a pass rate: each profile row is the mean over the samples in the main file only.
    const outPrefix = path.join(result.runDir, 'local_profile');
    const samples = readJsonlSync<Row>(`${outPrefix}.jsonl`);
    const failures = readJsonlSync<Row>(`${outPrefix}_failures.jsonl`);
    const doneKeys = new Set(samples.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`));
    assert.equal(failures.length, lp.failed);
    for (const f of failures) assert.equal(doneKeys.has(`${f._ng_task_index}:${f._ng_rollout_index}`), false);
    const rewardsByTask = new Map<number, number[]>();
    for (const r of samples)
      rewardsByTask.set(r._ng_task_index, [...(rewardsByTask.get(r._ng_task_index) ?? []), r.reward]);
    const failedByTask = new Map<number, number>();
    for (const f of failures) failedByTask.set(f._ng_task_index, (failedByTask.get(f._ng_task_index) ?? 0) + 1);
    const profile = readJsonlSync<Row>(`${outPrefix}_reward_profiling.jsonl`);
    for (const row of profile) {
      const rewards = rewardsByTask.get(row._ng_task_index)!;
      assert.equal(row.num_rollouts, rewards.length);
      assert.equal(row.expected_num_rollouts, NUM_SAMPLES);
      assert.equal(row.missing_num_rollouts, failedByTask.get(row._ng_task_index) ?? 0);
      assert.ok(Math.abs(row['mean/reward'] - rewards.reduce((s, x) => s + x, 0) / rewards.length) < 1e-12);
    }

    // Incomplete pivots are held back and counted; nothing published rests on fewer than K samples.
    const incomplete = profile.filter((row) => row.missing_num_rollouts > 0);
    assert.ok(incomplete.length > 0);
    assert.equal(summary.pivots.held_back_incomplete, incomplete.length + (result.counts.candidates! - profile.length));
    assert.equal(summary.pivots.published_partial, 0);
    assert.equal(summary.pivots.adds_up, true);
    assert.equal(result.counts.held_back_incomplete, summary.pivots.held_back_incomplete);
    const published = readJsonlSync<Row>(result.pivotsPath);
    assert.equal(published.length, summary.pivots.published);
    assert.ok(published.length > 0);
    for (const pivot of published) {
      assert.equal(pivot.provenance.local_num_samples, NUM_SAMPLES);
      assert.equal('local_partial' in pivot.provenance, false);
    }
    const candidates = readJsonlSync<Row>(path.join(result.runDir, 'candidates.jsonl'));
    const publishedUuids = new Set(published.map((p) => p.provenance.uuid));
    const mixedButIncomplete = incomplete.filter((row) => row['min/reward'] < row['max/reward']);
    assert.ok(mixedButIncomplete.length > 0, 'a pivot mixed on its completed samples is among those held back');
    for (const row of mixedButIncomplete)
      assert.equal(publishedUuids.has(candidates[row._ng_task_index].provenance.uuid), false);

    assert.match(readFileSync(result.reportPath, 'utf8'), /id="rollout-accounting"/);

    // 0.7.0's health checks ran on both stages. The simulator's rollouts carry no ng_trajectory, so
    // only the record checks could judge them, and they pass; the rest are unobserved, as in 0.7.0.
    for (const stage of ['collect', 'local_profile']) {
      const health = summary.health[stage];
      assert.equal(health.records, summary.stages[stage].succeeded, stage);
      assert.deepEqual(health.failed_checks, []);
      assert.equal(health.checks.rollout_duplicate_identity.verdict, 'pass');
      assert.equal(health.checks.model_call_failed.verdict, 'unobserved');
      assert.ok(existsSync(path.join(result.runDir, health.quality_summary)));
    }
    assert.match(readFileSync(result.reportPath, 'utf8'), /id="health-checks"/);
  },
);
