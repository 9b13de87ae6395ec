import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { collectWith070, collectWithPivotMiner, type Collection } from '../helpers/collect070';
import { indexOrder, readCollected } from '../helpers/collect070Lines';
import { type AnswerScript, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';

// NeMo Gym 0.7.0's two retry options. 0.7.0 applies them when a run resumes from its files, so it
// runs twice here: a first run, then `resume_from_cache` with the option. Our collect runs once with
// two attempts a rollout, the second within the run. The agent front fails each chosen rollout's
// first attempt and answers as the agent does after. Both must end with the same rollouts, sidecar
// and aggregate metrics.

const SEED = 7;
const { opened, task, caseRows } = collectCases(SEED, [], 'pivot-miner-retries-070-');
let servers: CollectServers;

before(async () => {
  ({ servers } = await opened());
});

/** Rewrites the answer to each of `rewrites`' rollouts (`task:rollout`) on its first /run only. */
function failingFirstAttempts(rewrites: Record<string, (answer: string) => string>): AnswerScript {
  const seen = new Set<string>();
  return (request, answer) => {
    const key = `${String(request._ng_task_index)}:${String(request._ng_rollout_index)}`;
    const rewrite = rewrites[key];
    if (!rewrite || seen.has(key)) return answer;
    seen.add(key);
    return rewrite(answer);
  };
}

const stamped = (cls: string) => (answer: string) =>
  answer.replace(/}$/, `,"_ng_failure_class":"${cls}","_ng_failure_terminal":true}`);

const invalidJudge = (answer: string) =>
  answer.replace(/"reward":[-0-9.eE]+/, '"reward":0.0').replace(/}$/, ',"invalid_judge_response":true}');

/** Task 1's first repeat times out, stamped terminal; task 2's second is skipped, stamped terminal. */
const TERMINAL_FAILURES = { '1:0': stamped('timeout_exceeded'), '2:1': stamped('skipped') };

/** Task 0's second repeat comes back with an invalid judge response and a zero reward. */
const INVALID_JUDGE = { '0:1': invalidJudge };

/** Lines sorted by their rollout's key: 0.7.0 appends a resumed rollout last, pivot-miner keeps input order. */
function byKey(lines: string[]): string[] {
  const keyed = lines.map((line, i) => ({ line, key: indexOrder([line])[0]!, i }));
  return keyed.sort((a, b) => a.key.localeCompare(b.key) || a.i - b.i).map((k) => k.line);
}

// A resumed rollout's request carries 0.7.0's `_ng_attempt_index` (its count of failed attempts), which
// the agent echoes into the rollout; pivot-miner's retry within the run posts the materialized row as
// it is. So it is cut from 0.7.0's rollouts, and the test fails unless exactly the retried ones had it.
const RESUME_ATTEMPT = /,"_ng_attempt_index":1(?=,)/;

function withoutResumeAttempts(rollouts: string[], retried: string[]): string[] {
  const carrying = rollouts.filter((line) => RESUME_ATTEMPT.test(line));
  assert.deepEqual(indexOrder(byKey(carrying)), retried, "0.7.0's retried rollouts carry its attempt index");
  return rollouts.map((line) => line.replace(RESUME_ATTEMPT, ''));
}

/**
 * 0.7.0 twice (with `options` on both runs, the second a resume) and our collect once with two
 * attempts, each with a fresh `script`; asserts they wrote the same, the `retried` rollouts
 * (`task:rollout`) having been run again, and resolves to ours.
 */
async function firstAttemptsFail(
  name: string,
  script: () => AnswerScript,
  options: Collection['options'],
  retried: string[],
) {
  const { caseDir, rowsFile } = caseRows(name, [task(0), task(1), task(2)]);
  const c: Collection = { rowsFile, numRepeats: 2, options };
  try {
    servers.script = script();
    const first = await collectWith070(servers, caseDir, c);
    await collectWith070(servers, caseDir, { ...c, options: { ...options, resume_from_cache: true } });
    const read = readCollected(first.prefix, '0.7.0');
    const theirs = { ...read, rollouts: withoutResumeAttempts(read.rollouts, retried) };
    servers.script = script();
    const run = await collectWithPivotMiner(servers, caseDir, { ...c, options: { ...options, max_attempts: 2 } });
    const ours = readCollected(run.prefix, 'pivot-miner');
    assert.equal(ours.materializedInputs, theirs.materializedInputs, 'materialized inputs');
    assert.deepEqual(indexOrder(byKey(ours.rollouts)), indexOrder(byKey(theirs.rollouts)), "rollouts' keys");
    assert.deepEqual(indexOrder(byKey(ours.failures)), indexOrder(byKey(theirs.failures)), "failures' keys");
    assert.deepEqual(byKey(ours.rollouts), byKey(theirs.rollouts), 'rollouts');
    assert.deepEqual(byKey(ours.failures), byKey(theirs.failures), 'failures sidecar');
    assert.deepEqual(ours.aggregateMetrics, theirs.aggregateMetrics, 'aggregate metrics');
    return { ...ours, accounting: run.accounting };
  } finally {
    servers.script = (_request, answer) => answer;
  }
}

const classes = (failures: string[]) =>
  failures.map((line) => {
    const f = JSON.parse(line) as Record<string, unknown>;
    return `${String(f._ng_task_index)}:${String(f._ng_rollout_index)} ${String(f._ng_failure_class)}`;
  });

test(
  'off by default: a terminal failure stays terminal and an invalid judge response stays a rollout',
  { timeout: 600_000 },
  async () => {
    const both = () => failingFirstAttempts({ ...TERMINAL_FAILURES, ...INVALID_JUDGE });
    const ours = await firstAttemptsFail('off', both, {}, []);
    assert.deepEqual(classes(ours.failures), ['1:0 timeout_exceeded', '2:1 skipped']);
    assert.equal(ours.rollouts.length, 4, 'neither terminal failure was tried again');
    const judged = ours.rollouts.find((line) => indexOrder([line])[0] === '0:1')!;
    assert.match(judged, /"reward":0\.0,.*"invalid_judge_response":true/, 'the invalid judge response is a rollout');
  },
);

test(
  'retry_terminal_timeouts: both retry the terminal timeout, not the skipped sample',
  { timeout: 600_000 },
  async () => {
    const ours = await firstAttemptsFail(
      'terminal',
      () => failingFirstAttempts(TERMINAL_FAILURES),
      { retry_terminal_timeouts: true },
      ['1:0'],
    );
    assert.deepEqual(classes(ours.failures), ['1:0 timeout_exceeded', '2:1 skipped']);
    assert.deepEqual(
      byKey(ours.rollouts).map((line) => indexOrder([line])[0]),
      ['0:0', '0:1', '1:0', '1:1', '2:0'],
    );
    assert.equal(ours.accounting.failed, 1, 'the skipped sample is the one failed rollout');
  },
);

test(
  'retry_invalid_judge_responses: both judge the invalid response again, its row in the sidecar',
  { timeout: 600_000 },
  async () => {
    const ours = await firstAttemptsFail(
      'invalid_judge',
      () => failingFirstAttempts(INVALID_JUDGE),
      { retry_invalid_judge_responses: true },
      ['0:1'],
    );
    assert.deepEqual(classes(ours.failures), ['0:1 judge_invalid']);
    assert.match(ours.failures[0]!, /"_ng_migrated_invalid_judge_response":true}$/);
    assert.equal(ours.rollouts.length, 6);
    assert.ok(!ours.rollouts.some((line) => line.includes('"invalid_judge_response"')), 'every rollout was judged');
  },
);

// Deliverables directories an agent's result may name: one with a file the agent produced beside its
// run state, one with run state only (nemo_gym/deliverables.py's ignored names), one with a folder only.
const deliverables = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-deliverables-070-'));
after(() => rmSync(deliverables, { recursive: true, force: true }));
const DELIVERED = path.join(deliverables, 'delivered');
const RUN_STATE = path.join(deliverables, 'run_state');
const FOLDER_ONLY = path.join(deliverables, 'folder_only');
for (const [dir, files] of [
  [DELIVERED, ['itinerary.md', 'log.txt']],
  [RUN_STATE, ['log.txt', 'metadata.json', 'history.json']],
] as const) {
  mkdirSync(dir);
  for (const file of files) writeFileSync(path.join(dir, file), 'x');
}
mkdirSync(path.join(FOLDER_ONLY, 'drafts'), { recursive: true });

/** An invalid judge response naming `dir`, the agent claiming its deliverable reusable when `claimed`. */
const invalidJudgeWith =
  (dir: string, claimed = false) =>
  (answer: string) =>
    invalidJudge(answer).replace(
      /}$/,
      `,"deliverables_dir":${JSON.stringify(dir)}${claimed ? ',"reuse_cached_deliverable":true' : ''}}`,
    );

/** Records each /run body by its rollout (`task:rollout`) in `sent`, then answers as `script` does. */
function recording(sent: Map<string, string[]>, script: AnswerScript): AnswerScript {
  return (request, answer, body) => {
    const key = `${String(request._ng_task_index)}:${String(request._ng_rollout_index)}`;
    sent.set(key, [...(sent.get(key) ?? []), body]);
    return script(request, answer, body);
  };
}

test(
  'retry_invalid_judge_responses: both flag a deliverable on disk for reuse, and the retry carries it',
  { timeout: 600_000 },
  async () => {
    const sides: Map<string, string[]>[] = [];
    const rewrites = {
      '0:1': invalidJudgeWith(DELIVERED),
      '1:0': invalidJudgeWith(RUN_STATE, true),
      '2:1': invalidJudgeWith(FOLDER_ONLY),
    };
    const script = () => {
      sides.push(new Map());
      return recording(sides.at(-1)!, failingFirstAttempts(rewrites));
    };
    const retried = ['0:1', '1:0', '2:1'];
    const options = { retry_invalid_judge_responses: true };
    const ours = await firstAttemptsFail('deliverable', script, options, retried);
    const reused = ours.failures.map((line) => line.includes('"reuse_cached_deliverable":true'));
    assert.deepEqual(classes(ours.failures), ['0:1 judge_invalid', '1:0 judge_invalid', '2:1 judge_invalid']);
    assert.deepEqual(reused, [true, false, false], 'only the directory with a deliverable is flagged');
    const [theirs, mine] = sides.map((sent) => retried.map((k) => sent.get(k)?.[1]));
    assert.ok(mine!.every(Boolean) && theirs!.every(Boolean), 'each rollout was posted twice on both sides');
    // 0.7.0's resume stamps its attempt index on the retried row before the flag: cut as in the rollouts.
    assert.deepEqual(
      mine,
      theirs!.map((body) => body!.replace(/,"_ng_attempt_index":1(?=[,}])/, '')),
      'the retried requests',
    );
    assert.match(mine![0]!, /,"reuse_cached_deliverable":true}$/, 'the retry re-judges the deliverable');
    assert.ok(!mine!.slice(1).some((body) => body!.includes('reuse_cached')), 'no other retry says so');
  },
);
