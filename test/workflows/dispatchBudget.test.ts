import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { getProgress } from '../../client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startBaseDirWorkerEnv, type WorkerTestEnv } from '../helpers/temporal';

// NeMo Gym 0.7.0's collection time budget on a real Temporal server and the seeded embedded stack.
// The agent answers tasks 0 and 1 (8 rollouts) only after SLOW_MS, the worker sends it at most 8
// requests at once, and one chunk (16 rows) runs at a time: the 8 slow rows hold every slot past the
// budget, so they are in flight when it ends and every other row is still waiting. The run must let
// the 8 finish, start nothing else, publish nothing and name the 72 rows left; started again with the same run id (a budget of its own), it runs
// only those rows and publishes what a run without a budget publishes, byte for byte.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-budget-test';
const BUDGET_S = 15;
const SLOW_MS = 25_000;
const ROWS = 20 * 4;
let stack: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let baseDir: string;

function writeConfig(file: string, budgeted: boolean): void {
  const demo = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8'));
  demo.collect.input_jsonl = 'tasks.jsonl';
  if (budgeted) {
    demo.collect.dispatch_budget_s = BUDGET_S;
    demo.collect.max_chunks_in_flight = 1;
    demo.servers.faults = {
      events_jsonl: 'fault_events.jsonl',
      agent: {
        slow_ms: SLOW_MS,
        rules: [
          { match: { _ng_task_index: 0 }, kind: 'slow' },
          { match: { _ng_task_index: 1 }, kind: 'slow' },
        ],
      },
    };
  }
  writeFileSync(path.join(baseDir, file), YAML.stringify(demo));
}

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-budget-'));
  writeFileSync(path.join(baseDir, 'tasks.jsonl'), readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl')));
  writeConfig('plain.yaml', false);
  writeConfig('budget.yaml', true);
  stack = await startBaseDirWorkerEnv(TASK_QUEUE, baseDir);
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => path.join(dir, f));
}

/** `task:rollout` of every rollout line in the collect stage's chunk shards (docs/fencing.md). */
function shardKeys(runDir: string): string[] {
  const shards = filesUnder(path.join(runDir, 'rollouts_shards')).filter((f) =>
    /\.attempts\/[^/]+(?<!_failures|_superseded)\.jsonl$/.test(f),
  );
  return shards.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const task = [...line.matchAll(/"_ng_task_index":(\d+)/g)].at(-1)?.[1];
        const rollout = [...line.matchAll(/"_ng_rollout_index":(\d+)/g)].at(-1)?.[1];
        return `${task}:${rollout}`;
      }),
  );
}

test(
  'a run out of its time budget finishes its rows in flight, publishes nothing, and its resume publishes the undisturbed bytes',
  { timeout: 600_000 },
  async () => {
    const plain = await runPivotMining(env.client, { taskQueue: TASK_QUEUE, configPath: 'plain.yaml', runId: 'plain' });

    const budgeted = { taskQueue: TASK_QUEUE, configPath: 'budget.yaml', runId: 'budget' };
    const runDir = path.join(baseDir, 'artifacts', 'runs', 'budget');
    let rowsLeft = 0;
    await assert.rejects(runPivotMining(env.client, budgeted), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError, String(err));
      const cause = err.cause;
      assert.ok(cause instanceof ApplicationFailure, String(cause));
      assert.equal(cause.type, 'DispatchBudgetSpent');
      const details = cause.details?.[0] as { rows: number; rowsLeft: number };
      rowsLeft = details.rowsLeft;
      assert.equal(details.rows, ROWS);
      assert.match(cause.message, new RegExp(`^collect.dispatch_budget_s \\(${BUDGET_S} s\\) ran out: ${rowsLeft} of`));
      assert.match(cause.message, /start the run again with the same run id/);
      return true;
    });

    const status = await getProgress(env.client, 'budget');
    assert.equal(status.status, 'FAILED');
    assert.match(
      status.failure ?? '',
      /^collect.dispatch_budget_s \(15 s\) ran out: 72 of 80 rollouts were not started/,
    );

    // The 8 slow rollouts were in flight when the budget ended and were written once they answered;
    // nothing that waited for a slot was started, and rows never started wrote nothing at all.
    const done = shardKeys(runDir);
    assert.equal(new Set(done).size, done.length, 'no rollout written twice');
    for (let task = 0; task < 2; task++)
      for (let rollout = 0; rollout < 4; rollout++)
        assert.ok(done.includes(`${task}:${rollout}`), `${task}:${rollout}`);
    assert.equal(done.length, 8, `${done.join(' ')}: rows were started after the budget ended`);
    assert.equal(rowsLeft, ROWS - 8);
    const failures = filesUnder(path.join(runDir, 'rollouts_shards')).filter((f) => f.endsWith('_failures.jsonl'));
    assert.equal(failures.map((f) => readFileSync(f, 'utf8')).join(''), '', 'a row left is not a failure');

    // Nothing partial is published: no merged rollouts, no candidates, no dataset.
    const published = filesUnder(runDir).map((f) => path.relative(runDir, f));
    for (const name of ['rollouts.jsonl', 'rollouts_reward_profiling.jsonl', 'candidates.jsonl'])
      assert.ok(!published.includes(name), `${name} was written`);
    assert.ok(!published.some((f) => path.basename(f).includes('pivots')), published.join(', '));
    // Early profiling is stopped with the run, and leaves nothing behind.
    assert.ok(!published.some((f) => /^prefetch|local_profile_prefetched/.test(f)), published.join(', '));

    // Started again with the same run id: the slow rows are not asked for again (each slow answer
    // is one fault event), the rows left run within the new budget, and the dataset is undisturbed.
    const resumed: PivotMiningResult = await runPivotMining(env.client, budgeted);
    assert.equal(readJsonlSync(path.join(baseDir, 'fault_events.jsonl')).length, 8);
    assert.equal(resumed.counts.rollouts, ROWS);
    assert.deepEqual(
      readFileSync(path.join(resumed.runDir, 'rollouts.jsonl')),
      readFileSync(path.join(plain.runDir, 'rollouts.jsonl')),
    );
    assert.ok(plain.counts.published! > 0);
    assert.equal(readFileSync(resumed.pivotsPath, 'utf8'), readFileSync(plain.pivotsPath, 'utf8'));
  },
);
