import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import {
  invalidJudgeFailureRow,
  isInvalidJudgeResponse,
  isTerminalFailure,
  observedElapsed,
} from '../../gym/failureRetry';
import { jsonText } from '../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../gym/kindedJson';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

// The two decisions of NeMo Gym 0.7.0's retry options, checked case by case and against the real
// 0.7.0's `is_terminal_failure`.

const row = (text: string) => parseKinded(text).kinded as JsonDict;

/** What 0.7.0 prints for each of `lines` as `r`: `imported` from rollout_collection, `printed` a Python expression of it. */
function each070(imported: string, printed: string, lines: string[]): string[] {
  const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
  const script = [
    'import sys, orjson',
    `from nemo_gym.rollout_collection import ${imported}`,
    'for line in sys.stdin.read().splitlines():',
    '    r = orjson.loads(line)',
    `    print(${printed})`,
  ].join('\n');
  const input = `${lines.join('\n')}\n`;
  return execFileSync(python, ['-c', script], { input, encoding: 'utf8' }).trim().split('\n');
}

// [sidecar row, terminal without the option, terminal with it]
const TERMINAL_CASES: Array<[string, boolean, boolean]> = [
  ['{"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}', true, false],
  ['{"_ng_failure_class":"reference_missing","_ng_failure_terminal":true}', true, false],
  ['{"_ng_failure_class":"eval_missing","_ng_failure_terminal":1}', true, false],
  ['{"_ng_failure_class":"transport_ineligible","_ng_failure_terminal":true}', true, false],
  ['{"_ng_failure_class":"skipped","_ng_failure_terminal":true}', true, true],
  ['{"_ng_failure_class":"skipped"}', false, true],
  ['{"_ng_failure_class":"agent_run_error","_ng_failure_terminal":true}', true, true],
  ['{"_ng_failure_class":"agent_run_error","_ng_failure_terminal":0.0}', false, false],
  ['{"_ng_failure_class":"timeout_exceeded"}', false, false],
  ['{"failure_class":"http_5xx","attempt":1}', false, false],
  ['{"_ng_failure_terminal":"yes"}', true, true],
  ['{"_ng_failure_terminal":""}', false, false],
];

test('a failure is terminal by its stamp, and retry_terminal_timeouts retries the timeout and fault classes', () => {
  for (const [text, off, on] of TERMINAL_CASES) {
    assert.equal(isTerminalFailure(row(text), false), off, `${text} without the option`);
    assert.equal(isTerminalFailure(row(text), true), on, `${text} with the option`);
  }
});

test("isTerminalFailure decides as 0.7.0's is_terminal_failure", { timeout: 300_000 }, () => {
  const theirs = each070(
    'is_terminal_failure',
    'int(is_terminal_failure(r)), int(is_terminal_failure(r, retry_terminal_timeouts=True))',
    TERMINAL_CASES.map(([text]) => text),
  );
  const ours = TERMINAL_CASES.map(
    ([text]) => `${Number(isTerminalFailure(row(text), false))} ${Number(isTerminalFailure(row(text), true))}`,
  );
  assert.deepEqual(ours, theirs);
});

test('an invalid judge response is one whose flag is truthy as Python reads it', () => {
  assert.equal(isInvalidJudgeResponse(row('{"invalid_judge_response":true}')), true);
  assert.equal(isInvalidJudgeResponse(row('{"invalid_judge_response":1}')), true);
  assert.equal(isInvalidJudgeResponse(row('{"invalid_judge_response":false}')), false);
  assert.equal(isInvalidJudgeResponse(row('{"invalid_judge_response":0.0}')), false);
  assert.equal(isInvalidJudgeResponse(row('{"reward":0.0}')), false);
});

test("an invalid judge response's sidecar row is the migration's: class, no stamp, reuse flag, marker last", () => {
  const result = row(
    '{"reward":0.0,"invalid_judge_response":true,"_ng_failure_terminal":true,"reuse_cached_deliverable":true,"_ng_task_index":1}',
  );
  assert.equal(
    jsonText(invalidJudgeFailureRow(result, false)),
    '{"reward":0.0,"invalid_judge_response":true,"_ng_task_index":1,"_ng_failure_class":"judge_invalid","_ng_migrated_invalid_judge_response":true}',
  );
  assert.equal(
    jsonText(invalidJudgeFailureRow(result, true)),
    '{"reward":0.0,"invalid_judge_response":true,"reuse_cached_deliverable":true,"_ng_task_index":1,"_ng_failure_class":"judge_invalid","_ng_migrated_invalid_judge_response":true}',
  );
  // A falsy class is replaced where it stands; a truthy one is kept.
  assert.equal(
    jsonText(invalidJudgeFailureRow(row('{"_ng_failure_class":"","invalid_judge_response":true}'), false)),
    '{"_ng_failure_class":"judge_invalid","invalid_judge_response":true,"_ng_migrated_invalid_judge_response":true}',
  );
  assert.equal(
    jsonText(
      invalidJudgeFailureRow(row('{"_ng_failure_class":"judge_unparseable","invalid_judge_response":1}'), false),
    ),
    '{"_ng_failure_class":"judge_unparseable","invalid_judge_response":1,"_ng_migrated_invalid_judge_response":true}',
  );
  assert.equal(dictKeys(result).includes('_ng_migrated_invalid_judge_response'), false, 'the result is not changed');
});

function dictKeys(dict: JsonDict): string[] {
  return dict instanceof Map ? [...dict.keys()] : Object.keys(dict);
}

// Failed attempts' sidecar rows, for how long each ran as `dispatch_longest_first` reads it.
const ELAPSED_CASES = [
  '{"elapsed_seconds":12.5}',
  '{"elapsed_seconds":0,"response":{"metadata":{"elapsed_seconds":7}}}',
  '{"elapsed_seconds":"30"}',
  '{"elapsed_seconds":" 1_000.5 "}',
  '{"elapsed_seconds":"abc","response":{"metadata":{"elapsed_seconds":"2e1"}}}',
  '{"elapsed_seconds":true}',
  '{"elapsed_seconds":false}',
  '{"elapsed_seconds":-3,"response":{"metadata":{}}}',
  '{"elapsed_seconds":"nan"}',
  '{"elapsed_seconds":"-Infinity","response":{"metadata":{"elapsed_seconds":"inf"}}}',
  '{"elapsed_seconds":[1]}',
  '{"elapsed_seconds":null,"response":null}',
  '{"response":{"metadata":null}}',
  '{"elapsed_seconds":"1__0"}',
  '{"elapsed_seconds":"_1"}',
  '{"elapsed_seconds":".5"}',
  '{"elapsed_seconds":"5."}',
  '{"elapsed_seconds":"1e"}',
  '{"elapsed_seconds":{"s":1}}',
  '{}',
];

test("observedElapsed reads a failed attempt's time as 0.7.0's observed_elapsed", { timeout: 300_000 }, () => {
  const printed = each070('observed_elapsed', 'repr(observed_elapsed(r))', ELAPSED_CASES);
  const theirs = printed.map((text) => (text === 'None' ? undefined : text === 'inf' ? Infinity : Number(text)));
  const ours = ELAPSED_CASES.map((text) => observedElapsed(JSON.parse(text) as JsonDict));
  assert.deepEqual(ours, theirs);
  assert.equal(theirs.filter((v) => v !== undefined).length, 9, 'the cases hold times 0.7.0 reads');
});
