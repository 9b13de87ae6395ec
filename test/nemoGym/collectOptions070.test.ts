import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  assertSameCollection,
  indexOrder,
  startCollectServers,
  type AnswerScript,
  type CollectServers,
} from '../helpers/collect070';

// NeMo Gym 0.7.0's collection options, each run by 0.7.0's ng_collect_rollouts and by our collect
// stage on the same rows and servers: the same materialized inputs, rollouts in the same order, the
// same failures sidecar and aggregate metrics (test/helpers/collect070.ts says what is compared).

const SEED = 7;
let servers: CollectServers;
let dir: string;
let rowsFile: string;

before(async () => {
  servers = await startCollectServers(SEED);
  dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-collect-070-'));
  // Three demo tasks and the first again: a duplicate line continues its task's rollout indices.
  const demo = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8').split('\n');
  rowsFile = path.join(dir, 'tasks.jsonl');
  writeFileSync(rowsFile, `${[...demo.slice(0, 3), demo[0]].join('\n')}\n`);
});

after(async () => {
  await servers?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A directory of its own for each case. */
function caseDir(name: string): string {
  const caseDirectory = path.join(dir, name);
  mkdirSync(caseDirectory);
  return caseDirectory;
}

test('without options, 0.7.0 and our collect write the same files', { timeout: 300_000 }, async () => {
  const ours = await assertSameCollection(servers, caseDir('plain'), { rowsFile, numRepeats: 2, options: {} });
  assert.deepEqual(indexOrder(ours.materializedInputs), ['0:0', '0:1', '1:0', '1:1', '2:0', '2:1', '0:2', '0:3']);
  assert.equal(ours.rollouts.length, 8);
});

test('interleave_repeats: both run the repeats round by round', { timeout: 300_000 }, async () => {
  const ours = await assertSameCollection(servers, caseDir('interleave'), {
    rowsFile,
    numRepeats: 2,
    options: { interleave_repeats: true },
  });
  // A stable sort by rollout index: the duplicate line's repeats (rollouts 2 and 3 of task 0) come last.
  const order = ['0:0', '1:0', '2:0', '0:1', '1:1', '2:1', '0:2', '0:3'];
  assert.deepEqual(indexOrder(ours.materializedInputs), order);
  assert.deepEqual(indexOrder(ours.rollouts), order);
});

/** The agent's answer to task 1's first repeat says not to keep it (`_ng_no_persist`): it leaves no row anywhere. */
const omitTask1: AnswerScript = (request, answer) =>
  request._ng_task_index === 1 && request._ng_rollout_index === 0
    ? answer.replace(/}$/, ',"_ng_no_persist":true}')
    : answer;

test(
  'count_missing_rollouts_as_zero: both score a rollout that left no row as a zero',
  { timeout: 600_000 },
  async () => {
    servers.script = omitTask1;
    try {
      const left = await assertSameCollection(servers, caseDir('omitted'), { rowsFile, numRepeats: 2, options: {} });
      const counted = await assertSameCollection(servers, caseDir('count_missing'), {
        rowsFile,
        numRepeats: 2,
        options: { count_missing_rollouts_as_zero: true },
      });
      assert.equal(counted.rollouts.length, 7, 'the omitted rollout is in no file');
      assert.ok(!indexOrder(counted.rollouts).includes('1:0'));
      assert.match(counted.printed070, /Scored as zero because they left no row: 1 of 8 rollouts/);
      assert.notDeepEqual(counted.aggregateMetrics, left.aggregateMetrics, 'the zero is in the score');
    } finally {
      servers.script = (_request, answer) => answer;
    }
  },
);
