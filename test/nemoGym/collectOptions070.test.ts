import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertSameCollection, assertSameProfile, type Collection } from '../helpers/collect070';
import { indexOrder } from '../helpers/collect070Lines';
import { type AnswerScript, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';

// NeMo Gym 0.7.0's collection options, each run by 0.7.0's ng_collect_rollouts and by our collect
// stage on the same rows and servers: the same materialized inputs, rollouts in the same order, the
// same failures sidecar and aggregate metrics (test/helpers/collect070Lines.ts says what is compared).

const SEED = 7;
const { opened, task, caseRows } = collectCases(SEED, [], 'pivot-miner-collect-070-');
let servers: CollectServers;

before(async () => {
  ({ servers } = await opened());
});

/** A directory of its own for each case, with three demo tasks and the first again: a duplicate line continues its task's rollout indices. */
function newCase(name: string): { caseDir: string; rowsFile: string } {
  return caseRows(name, [task(0), task(1), task(2), task(0)]);
}

test('without options, 0.7.0 and our collect write the same files', { timeout: 300_000 }, async () => {
  const { caseDir, rowsFile } = newCase('plain');
  const ours = await assertSameCollection(servers, caseDir, { rowsFile, numRepeats: 2, options: {} });
  assert.deepEqual(indexOrder(ours.materializedInputs), ['0:0', '0:1', '1:0', '1:1', '2:0', '2:1', '0:2', '0:3']);
  assert.equal(ours.rollouts.length, 8);
  await assertSameProfile(ours.prefix);
});

test('interleave_repeats: both run the repeats round by round', { timeout: 300_000 }, async () => {
  const { caseDir, rowsFile } = newCase('interleave');
  const ours = await assertSameCollection(servers, caseDir, {
    rowsFile,
    numRepeats: 2,
    options: { interleave_repeats: true },
  });
  // A stable sort by rollout index: the duplicate line's repeats (rollouts 2 and 3 of task 0) come last.
  const order = ['0:0', '1:0', '2:0', '0:1', '1:1', '2:1', '0:2', '0:3'];
  assert.deepEqual(indexOrder(ours.materializedInputs), order);
  assert.deepEqual(indexOrder(ours.rollouts), order);
  await assertSameProfile(ours.prefix);
});

type Compared = Awaited<ReturnType<typeof assertSameCollection>>;

/**
 * Both collections with the agent answering through `script`, without `options` and with them;
 * resolves to what ours wrote each time.
 */
async function offAndOn(
  name: string,
  script: AnswerScript,
  options: Collection['options'],
): Promise<{ off: Compared; on: Compared }> {
  servers.script = script;
  try {
    const plain = newCase(`${name}_off`);
    const off = await assertSameCollection(servers, plain.caseDir, {
      rowsFile: plain.rowsFile,
      numRepeats: 2,
      options: {},
    });
    const optioned = newCase(name);
    const on = await assertSameCollection(servers, optioned.caseDir, {
      rowsFile: optioned.rowsFile,
      numRepeats: 2,
      options,
    });
    return { off, on };
  } finally {
    servers.script = (_request, answer) => answer;
  }
}

/** The agent's answer to task 1's first repeat says not to keep it (`_ng_no_persist`): it leaves no row anywhere. */
const omitTask1: AnswerScript = (request, answer) =>
  request._ng_task_index === 1 && request._ng_rollout_index === 0
    ? answer.replace(/}$/, ',"_ng_no_persist":true}')
    : answer;

test(
  'count_missing_rollouts_as_zero: both score a rollout that left no row as a zero',
  { timeout: 600_000 },
  async () => {
    const { off, on } = await offAndOn('count_missing', omitTask1, { count_missing_rollouts_as_zero: true });
    assert.equal(on.rollouts.length, 7, 'the omitted rollout is in no file');
    assert.ok(!indexOrder(on.rollouts).includes('1:0'));
    assert.match(on.printed070, /Scored as zero because they left no row: 1 of 8 rollouts/);
    assert.equal(on.accounting.omitted, 1, "the stage's omitted count is 0.7.0's coverage/imputed");
    assert.notDeepEqual(on.aggregateMetrics, off.aggregateMetrics, 'the zero is in the score');
    await assertSameProfile(on.prefix);
  },
);

/**
 * The agent reports two rollouts failed, as an agent does with `_ng_failure_class`: task 1's first
 * repeat without a reward (agent_run_error), task 2's second with its reward (timeout_exceeded).
 */
const failTwo: AnswerScript = (request, answer) => {
  const failure = (cls: string) => `,"_ng_failure_class":"${cls}","_ng_failure_message":"scripted"}`;
  if (request._ng_task_index === 1 && request._ng_rollout_index === 0)
    return answer.replace(/"reward":[-0-9.eE]+,/, '').replace(/}$/, failure('agent_run_error'));
  if (request._ng_task_index === 2 && request._ng_rollout_index === 1)
    return answer.replace(/}$/, failure('timeout_exceeded'));
  return answer;
};

test('count_failure_classes_as_zero: both score the named failure classes only', { timeout: 600_000 }, async () => {
  const { off, on } = await offAndOn('count_failures', failTwo, { count_failure_classes_as_zero: ['agent_run_error'] });
  assert.equal(on.failures.length, 2, 'both failures are in the sidecar');
  assert.equal(on.rollouts.length, 6);
  assert.match(on.printed070, /Counting 1 failure row\(s\) as scored zeros: \['agent_run_error'\]/);
  assert.notDeepEqual(on.aggregateMetrics, off.aggregateMetrics, 'the counted failure is in the score');
});

/** The agent answers task 1's first repeat with a 500 (the rollout ran and broke) and task 2's second with a 503 (it may not have). */
const refuseTwo: AnswerScript = (request, answer) => {
  if (request._ng_task_index === 1 && request._ng_rollout_index === 0)
    return { status: 500, body: '{"detail":"the environment broke"}' };
  if (request._ng_task_index === 2 && request._ng_rollout_index === 1) return { status: 503, body: '' };
  return answer;
};

test(
  "route_failures_to_sidecar: both write 0.7.0's row for a failed /run, and can count it",
  { timeout: 600_000 },
  async () => {
    servers.script = refuseTwo;
    try {
      const { caseDir, rowsFile } = newCase('route_failures');
      const ours = await assertSameCollection(servers, caseDir, {
        rowsFile,
        numRepeats: 2,
        options: { route_failures_to_sidecar: true, count_failure_classes_as_zero: ['agent_run_error'] },
      });
      const failures = ours.failures.map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.deepEqual(
        failures.map((f) => [f._ng_failure_class, f._ng_failure_http_status, f._ng_failure_response_body]),
        [
          ['agent_run_error', 500, '{"detail":"the environment broke"}'],
          ['agent_request_failed', 503, null],
        ],
      );
      assert.equal(ours.rollouts.length, 6);
      assert.match(ours.printed070, /Counting 1 failure row\(s\) as scored zeros/);
    } finally {
      servers.script = (_request, answer) => answer;
    }
  },
);

test('require_complete: both write every file, then fail naming what completed', { timeout: 600_000 }, async () => {
  servers.script = refuseTwo;
  try {
    const { caseDir, rowsFile } = newCase('require_complete');
    const ours = await assertSameCollection(servers, caseDir, {
      rowsFile,
      numRepeats: 2,
      options: { route_failures_to_sidecar: true, require_complete: true },
      stopsWith: /EVAL FAILED: 6\/8 samples completed\. Partial artifacts retained at \S+\/rollouts\.jsonl\./,
    });
    assert.equal(ours.rollouts.length, 6);
    assert.equal(ours.failures.length, 2);
  } finally {
    servers.script = (_request, answer) => answer;
  }
});
