import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { alignPending, alignPrefetched, type AlignResult } from '../../../activities/early/prefetched';
import { prefetchedDir, readPrefetched } from '../../../activities/early/filedChunks';
import { stageMaterializeOptions, stageSettings } from '../../../contracts/stageSettings';
import { materializeRecords } from '../../../gym/materialize';
import { removeEarlyProfiling } from '../../../activities/early/prefetch';
import { collectPlan } from '../fakeGym';
import { recordSyncs } from '../../helpers/syncSpy';
import { stallFirstAt } from '../../helpers/stallFirst';

// The run's local profile reuses an early sample only for its own key and the very same request:
// candidates in another order (a later tier) are still found, a candidate whose request differs is
// sampled live, and each reused line is filed under the run's own row indices and chunk.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-prefetched-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SAMPLES = 2;
const plan = collectPlan(
  dir,
  { agent_url: 'http://127.0.0.1:1' },
  {},
  {
    local_profile: { num_samples: SAMPLES, chunk_size: 3 },
  },
);

function candidate(task: number, text: string) {
  return {
    responses_create_params: {
      input: [{ role: 'user', content: text }],
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: { type: 'message', content: 'ok' },
    agent_ref: { name: 'fake_pivot_agent', type: 'responses_api_agents' },
    provenance: { task_index: task, rollout_index: 0, pivot_index: 0 },
  };
}

/** A segment's local profile: its candidates materialized as the stage does (segment indices, seeds), each with a verdict. */
async function segment(name: string, candidates: ReturnType<typeof candidate>[]): Promise<string> {
  const segmentDir = path.join(plan.runDir, 'prefetch', name);
  mkdirSync(segmentDir, { recursive: true });
  const records = materializeRecords(
    candidates.map((c, i) => ({ value: c, line: i + 1, byteOffset: 0, byteLength: 0 })),
    stageMaterializeOptions(stageSettings(plan, 'local_profile')),
    name,
  );
  const lines: string[] = [];
  for await (const { row, text } of records) {
    const id = `${name}-${row._ng_task_index}-${row._ng_rollout_index}`;
    lines.push(`${text.slice(0, -1)},"response":{"id":"${id}"},"reward":1.0,"category":"match"}`);
  }
  writeFileSync(path.join(segmentDir, 'local_profile.jsonl'), `${lines.join('\n')}\n`);
  return segmentDir;
}

test('early samples are reused by key and request, across tiers, under the run’s own indices', async () => {
  // The run's order puts task 2 (a mixed task, tier 0) before tasks 0 and 1: the walk starts over.
  const run = [candidate(2, 'c'), candidate(0, 'a'), candidate(1, 'b')];
  const candidatesPath = path.join(plan.runDir, 'candidates.jsonl');
  writeFileSync(candidatesPath, run.map((c) => `${JSON.stringify(c)}\n`).join(''));
  // Early, task 1's candidate was cut from a different trajectory prefix: not the same request.
  const segments = [
    await segment('rows-0-4', [candidate(0, 'a'), candidate(1, 'other')]),
    await segment('rows-4-8', [candidate(2, 'c')]),
  ];
  const outPrefix = path.join(plan.runDir, 'local_profile');

  const result = await new MockActivityEnvironment().run(alignPrefetched, {
    plan,
    candidatesPath,
    outPrefix,
    segments,
  });
  // Chunk 0 (rows 0-2) is answered whole; chunk 1 still calls the engine for rows 4-5.
  assert.deepEqual(result, { reused: 4, rows: 6, wholeChunks: [[0, 1]] });

  // Rows 0-1 (task 2) and 2-3 (task 0) reused; rows 4-5 (task 1) left for a live call. Chunks of 3 rows.
  const files = readdirSync(prefetchedDir(outPrefix)).sort();
  assert.deepEqual(files, ['chunk-000000.jsonl', 'chunk-000001.jsonl']);
  const keyed = (file: string) =>
    readFileSync(path.join(prefetchedDir(outPrefix), file), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('\t')), JSON.parse(line.slice(line.indexOf('\t') + 1)).response.id]);
  assert.deepEqual(keyed(files[0]!), [
    ['0:0', 'rows-4-8-0-0'],
    ['0:1', 'rows-4-8-0-1'],
    ['1:0', 'rows-0-4-0-0'],
  ]);
  assert.deepEqual(keyed(files[1]!), [['1:1', 'rows-0-4-0-1']]);
});

test('a sample line not in orjson’s form is decoded and gives the verdict bytes a scanned one gives', async () => {
  const candidatesPath = path.join(plan.runDir, 'candidates-spaced.jsonl');
  writeFileSync(candidatesPath, `${JSON.stringify(candidate(0, 'a'))}\n`);
  const scanned = await segment('rows-0-2', [candidate(0, 'a')]);
  // The same samples with a space after every top-level comma: valid JSON, not orjson's form.
  const spaced = path.join(plan.runDir, 'prefetch', 'rows-0-2-spaced');
  mkdirSync(spaced, { recursive: true });
  const lines = readFileSync(path.join(scanned, 'local_profile.jsonl'), 'utf8').split('\n');
  writeFileSync(
    path.join(spaced, 'local_profile.jsonl'),
    lines.map((l) => l.replace(',"reward"', ', "reward"')).join('\n'),
  );
  const filed = async (segments: string[], name: string) => {
    const outPrefix = path.join(plan.runDir, name);
    const result = await new MockActivityEnvironment().run(alignPrefetched, {
      plan,
      candidatesPath,
      outPrefix,
      segments,
    });
    return { result, text: readFileSync(path.join(prefetchedDir(outPrefix), 'chunk-000000.jsonl'), 'utf8') };
  };
  const fromScanned = await filed([scanned], 'scanned');
  const fromDecoded = await filed([spaced], 'decoded');
  assert.deepEqual(fromScanned.result, { reused: 2, rows: 2, wholeChunks: [[0, 1]] });
  assert.equal(fromDecoded.text, fromScanned.text);
  assert.match(fromScanned.text, /^0:0\t\{"response":\{"id":"rows-0-2-0-0"\},"reward":1\.0,"category":"match"\}\n/);
});

test('two passes, the second over the rows of segments still profiling, file what one pass files', async () => {
  const run = [candidate(2, 'c'), candidate(0, 'a'), candidate(1, 'b')];
  const candidatesPath = path.join(plan.runDir, 'candidates-two-pass.jsonl');
  writeFileSync(candidatesPath, run.map((c) => `${JSON.stringify(c)}\n`).join(''));
  const done = await segment('rows-0-4', [candidate(0, 'a'), candidate(1, 'other')]);
  const late = await segment('rows-4-8', [candidate(2, 'c')]);
  const lateCandidates = path.join(late, 'candidates.jsonl');
  writeFileSync(lateCandidates, `${JSON.stringify(candidate(2, 'c'))}\n`);
  const env = new MockActivityEnvironment();
  const filed = async (outPrefix: string) => [await readPrefetched(outPrefix, 0), await readPrefetched(outPrefix, 1)];
  const chunk0: Array<[number, number]> = [[0, 1]];

  const onePass = path.join(plan.runDir, 'one-pass');
  const whole: AlignResult = await env.run(alignPrefetched, {
    plan,
    candidatesPath,
    outPrefix: onePass,
    segments: [done, late],
  });

  const twoPass = path.join(plan.runDir, 'two-pass');
  const first = await env.run(alignPrefetched, {
    plan,
    candidatesPath,
    outPrefix: twoPass,
    segments: [done],
    pending: [lateCandidates],
  });
  // Rows 0-1 (task 2, the late segment's) set aside; chunk 0 counted whole until the second pass says.
  assert.deepEqual(first, { reused: 2, rows: 6, wholeChunks: [[0, 1]], pending: 2 });
  const second: Pick<AlignResult, 'reused' | 'wholeChunks'> = await env.run(alignPending, {
    plan,
    outPrefix: twoPass,
    segments: [late],
    wholeChunks: chunk0,
  });
  assert.deepEqual({ ...second, reused: first.reused + second.reused }, { reused: 4, wholeChunks: whole.wholeChunks });
  assert.deepEqual(await filed(twoPass), await filed(onePass));

  // The late segment failed: its rows are sampled live, and chunk 0 is no longer whole.
  const failed = await env.run(alignPending, { plan, outPrefix: twoPass, segments: [], wholeChunks: chunk0 });
  assert.deepEqual(failed, { reused: 0, wholeChunks: [] });
  assert.equal((await readPrefetched(twoPass, 0)).size, 1);
});

test('each filing pass heartbeats from its start, before a 2-minute heartbeat timeout could pass', async () => {
  const candidatesPath = path.join(plan.runDir, 'candidates-beats.jsonl');
  writeFileSync(candidatesPath, `${JSON.stringify(candidate(0, 'a'))}\n`);
  const late = await segment('rows-8-9', [candidate(0, 'a')]);
  const lateCandidates = path.join(late, 'candidates.jsonl');
  writeFileSync(lateCandidates, `${JSON.stringify(candidate(0, 'a'))}\n`);
  const outPrefix = path.join(plan.runDir, 'beats');
  const beats = async (run: (env: MockActivityEnvironment) => Promise<unknown>): Promise<number> => {
    const env = new MockActivityEnvironment();
    let count = 0;
    env.on('heartbeat', () => count++);
    await run(env);
    return count;
  };
  const first = await beats((env) =>
    env.run(alignPrefetched, { plan, candidatesPath, outPrefix, segments: [], pending: [lateCandidates] }),
  );
  const second = await beats((env) => env.run(alignPending, { plan, outPrefix, segments: [late], wholeChunks: [] }));
  assert.ok(first >= 2, `alignPrefetched heartbeat ${first} times: before reading the pending sources and the rows`);
  assert.ok(second >= 1, `alignPending heartbeat ${second} times`);
});

test('early profiling’s files go, with the staging a crashed filing left, and their removal is synced', async () => {
  const runDir = path.join(dir, 'removal');
  const matched = prefetchedDir(path.join(runDir, 'local_profile'));
  const staging = `${matched}.4242-cafe0123.tmp`;
  for (const d of [path.join(runDir, 'prefetch', 'rows-0-16'), matched, staging]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(runDir, 'prefetch', 'rows-0-16', 'rollouts.jsonl'), '{}\n');
  writeFileSync(path.join(runDir, 'local_profile.jsonl'), '{}\n');
  const { record } = await recordSyncs(async () => {
    await new MockActivityEnvironment().run(removeEarlyProfiling, { runDir, part: 'segments' as const });
    await new MockActivityEnvironment().run(removeEarlyProfiling, { runDir, part: 'matched' as const });
  });
  assert.deepEqual(readdirSync(runDir), ['local_profile.jsonl']);
  assert.deepEqual(record.missing([runDir], false), [], 'the run directory is synced after the removals');
  // Nothing to remove (a run that never profiled early, or a retry): still no error.
  await new MockActivityEnvironment().run(removeEarlyProfiling, { runDir, part: 'segments' as const });
});

/** A filing pass's attempt in one workflow run, scheduled (this attempt) at `scheduled`. */
const filingAttempt = (scheduled: number, n = 1) =>
  new MockActivityEnvironment({
    scheduledTimestampMs: scheduled,
    currentAttemptScheduledTimestampMs: scheduled,
    attempt: n,
    workflowExecution: { workflowId: 'run/prefetch', runId: 'run-a' },
  });

test('a filing pass that wakes after a newer one wipes nothing it filed, and files nothing after the removal', async () => {
  const run = [candidate(2, 'c'), candidate(0, 'a'), candidate(1, 'b')];
  const runDir = path.join(dir, 'fenced');
  mkdirSync(runDir, { recursive: true });
  const candidatesPath = path.join(runDir, 'candidates.jsonl');
  writeFileSync(candidatesPath, run.map((c) => `${JSON.stringify(c)}\n`).join(''));
  const done = await segment('rows-0-4', [candidate(0, 'a'), candidate(1, 'b')]);
  const late = await segment('rows-4-8', [candidate(2, 'c')]);
  const lateCandidates = path.join(late, 'candidates.jsonl');
  writeFileSync(lateCandidates, `${JSON.stringify(candidate(2, 'c'))}\n`);
  const outPrefix = path.join(runDir, 'local_profile');
  const firstPass = { plan, candidatesPath, outPrefix, segments: [done], pending: [lateCandidates] };
  const secondPass = { plan, outPrefix, segments: [late], wholeChunks: [[0, 1]] as Array<[number, number]> };

  // Attempt 1 of the first pass stalls (a paused process) just before it files in place.
  const stall = stallFirstAt('filing.committing');
  try {
    const stalled = filingAttempt(1000).run(alignPrefetched, firstPass);
    await stall.held();
    // Its retry and then the second pass complete.
    await filingAttempt(1000, 2).run(alignPrefetched, firstPass);
    await filingAttempt(3000).run(alignPending, secondPass);
    const filed = listing(prefetchedDir(outPrefix));
    assert.ok(filed.includes('tail/chunk-000000.jsonl'), filed.join(', '));
    stall.wake();
    await assert.rejects(stalled, /superseded/);
    assert.deepEqual(listing(prefetchedDir(outPrefix)), filed, 'the stalled pass wiped nothing');

    // Once the run's local profile is done the files go; a pass that starts late files nothing.
    await filingAttempt(4000).run(removeEarlyProfiling, { runDir, part: 'matched' as const });
    await assert.rejects(filingAttempt(3000, 2).run(alignPending, secondPass), /superseded/);
    assert.deepEqual(
      readdirSync(runDir).filter((name) => name.startsWith('local_profile_prefetched')),
      [],
      'nothing filed after the removal',
    );
  } finally {
    stall.release();
  }
});

test('a filing pass paused before it claimed anything, woken after the run removed early profiling, writes nothing', async () => {
  const runDir = path.join(dir, 'closed');
  mkdirSync(runDir, { recursive: true });
  const candidatesPath = path.join(runDir, 'candidates.jsonl');
  writeFileSync(candidatesPath, `${JSON.stringify(candidate(0, 'a'))}\n`);
  const done = await segment('rows-0-2', [candidate(0, 'a')]);
  const outPrefix = path.join(runDir, 'local_profile');
  const pass = { plan, candidatesPath, outPrefix, segments: [done] };
  // Its retry files; the run (a workflow run of its own, so the order is by claim) removes the files.
  await filingAttempt(1000, 2).run(alignPrefetched, pass);
  const parent = new MockActivityEnvironment({
    scheduledTimestampMs: 9000,
    currentAttemptScheduledTimestampMs: 9000,
    attempt: 1,
    workflowExecution: { workflowId: 'run', runId: 'run-parent' },
  });
  await parent.run(removeEarlyProfiling, { runDir, part: 'matched' as const });
  const fence = path.join(`${outPrefix}_shards`, 'early');
  const fenceBefore = readdirSync(fence).sort();
  // Attempt 1, paused (a SIGSTOPped worker) before its claim, wakes: its claim would be the newest.
  await assert.rejects(filingAttempt(1000).run(alignPrefetched, pass), /superseded/);
  assert.deepEqual(
    readdirSync(runDir).filter((name) => name.startsWith('local_profile_prefetched')),
    [],
    'nothing filed after the removal',
  );
  assert.deepEqual(readdirSync(fence).sort(), fenceBefore, 'no claim taken, none removed');
});

function listing(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
}
