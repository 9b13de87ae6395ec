import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { InvalidJudgeResponse, invalidJudgeResponse } from '../../../../activities/chunk/executors/invalidJudge';
import { jsonText } from '../../../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../../../gym/kindedJson';
import { ensureNemoGym } from '../../../../scripts/lib/nemoGym';

// Under retry_invalid_judge_responses an invalid judge response's sidecar row is the one NeMo Gym
// 0.7.0's `migrate_invalid_judge_main_rows` writes when it moves that row out of the rollouts,
// looking at the result's deliverables directory as 0.7.0 does.

test("an invalid judge response's sidecar row is the one 0.7.0's migration writes", { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-invalid-judge-'));
  try {
    const withDeliverable = path.join(dir, 'with');
    const runStateOnly = path.join(dir, 'state');
    mkdirSync(withDeliverable);
    mkdirSync(runStateOnly);
    writeFileSync(path.join(withDeliverable, 'answer.txt'), 'x');
    writeFileSync(path.join(runStateOnly, 'log.txt'), 'x');
    writeFileSync(path.join(runStateOnly, 'metadata.json'), '{}');
    const rows = [
      { reward: 0, invalid_judge_response: true, _ng_task_index: 0, _ng_rollout_index: 0 },
      {
        reward: 0,
        invalid_judge_response: 1,
        _ng_failure_terminal: true,
        deliverables_dir: withDeliverable,
        _ng_task_index: 1,
        _ng_rollout_index: 0,
      },
      {
        reuse_cached_deliverable: true,
        invalid_judge_response: true,
        deliverables_dir: runStateOnly,
        _ng_task_index: 2,
        _ng_rollout_index: 0,
      },
      { invalid_judge_response: true, deliverables_dir: path.join(dir, 'absent'), _ng_task_index: 3 },
      { reward: 1, invalid_judge_response: false, _ng_task_index: 4, _ng_rollout_index: 0 },
    ].map((r) => JSON.stringify(r).replace(/"reward":0,/, '"reward":0.0,'));
    const main = path.join(dir, 'rollouts.jsonl');
    writeFileSync(main, `${rows.join('\n')}\n`);
    const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
    const script = `import sys\nfrom pathlib import Path\nfrom nemo_gym.rollout_collection import migrate_invalid_judge_main_rows\nmigrate_invalid_judge_main_rows(Path(sys.argv[1]))`;
    execFileSync(python, ['-c', script, main], { encoding: 'utf8' });
    const theirs = readFileSync(path.join(dir, 'rollouts_failures.jsonl'), 'utf8').trim().split('\n');

    const ours: string[] = [];
    for (const text of rows) {
      const failure = await invalidJudgeResponse(parseKinded(text).kinded as JsonDict, 'http://agent/run');
      if (failure) ours.push(jsonText(failure.row));
      if (failure) assert.ok(failure instanceof InvalidJudgeResponse && failure.retryable);
    }
    assert.equal(theirs.length, 4);
    assert.deepEqual(ours, theirs);
    assert.match(theirs[1]!, /"reuse_cached_deliverable":true/, 'a deliverable on disk is flagged for reuse');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
