import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { PivotMiningResult } from '../../contracts/payloads';
import { gymEvalAggregate070 } from '../helpers/gymEvalAggregate';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// The demo's own files against NeMo Gym 0.7.0's `gym eval aggregate` on the demo's rollouts: each
// stage's merged rollouts, health files and aggregate metrics, byte for byte. Collect's are the
// embedded agent's answer, local profiling's are computed in-process; 0.7.0's are its own servers'.

const TASK_QUEUE = 'pivot-mining-eval-aggregate-demo';

let stack: WorkerTestEnv;
let workDir: string;
let result: PivotMiningResult;

before(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-eval-aggregate-demo-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: path.join(workDir, 'artifacts') });
  result = await runPivotMining(stack.env.client, {
    taskQueue: TASK_QUEUE,
    configPath: 'configs/demo.yaml',
    runId: 'demo',
    workflowId: 'eval-aggregate-demo',
  });
});

after(async () => {
  await stack?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

for (const stem of ['rollouts', 'local_profile']) {
  test(
    `gym eval aggregate 0.7.0 on the demo's ${stem}.jsonl writes the stage's files`,
    { timeout: 900_000 },
    async (t) => {
      const rollouts = path.join(result.runDir, `${stem}.jsonl`);
      const agents = [
        ...new Set(readJsonlSync<{ agent_ref: { name: string } }>(rollouts).map((r) => r.agent_ref.name)),
      ];
      const theirs = path.join(workDir, `theirs_${stem}`, `${stem}.jsonl`);
      mkdirSync(path.dirname(theirs));
      await gymEvalAggregate070(rollouts, theirs, agents);
      const read = (file: string) => readFileSync(file, 'utf8');
      const theirFile = (file: string) => read(path.join(path.dirname(theirs), file));
      const ourFile = (suffix: string) => read(path.join(result.runDir, `${stem}${suffix}`));
      assert.equal(read(theirs), read(rollouts), 'the merged rollouts');
      assert.equal(theirFile('quality_summary.json'), ourFile('_quality_summary.json'));
      assert.equal(theirFile('rollout_verdicts.jsonl'), ourFile('_rollout_verdicts.jsonl'));
      const metrics = theirFile(`${stem}_aggregate_metrics.json`);
      for (const file of [
        'quality_summary.json',
        'rollout_verdicts.jsonl',
        `${stem}.jsonl`,
        `${stem}_aggregate_metrics.json`,
      ])
        t.diagnostic(`${file} sha256 ${createHash('sha256').update(theirFile(file)).digest('hex')}`);
      assert.equal(ourFile('_aggregate_metrics.json'), metrics);
      // The demo runs each task and samples each pivot several times, so 0.7.0's additions are there to compare.
      assert.match(metrics, /"num_repeats": [2-9]/);
      assert.match(metrics, /"repeat_level_metrics": \[\n/);
    },
  );
}
