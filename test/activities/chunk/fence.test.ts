import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runChunk } from '../../../activities/chunk/chunk';
import { finishStage } from '../../../activities/stage/finishStage';
import { mergeChunks } from '../../../activities/stage/merge';
import {
  NOTHING_MERGED,
  type ChunkInput,
  type ChunkResult,
  type MergeProgress,
  type RunPlan,
} from '../../../contracts/payloads';
import { onPause } from '../../../activities/run/testHooks';
import { computeAggregateMetrics } from '../../../gym/aggregateMetrics';
import { HttpError, listenJson, type RunningServer } from '../../../servers/http';
import { collectPlan, materialize, outPrefixOf, startFakeHead, taskRow, writeJsonl, type FakeAgent } from '../fakeGym';

// A partitioned worker is not dead (docs/fencing.md): an attempt Temporal gave up on may wake up and
// carry on after its successor finished. Here the older attempt of a chunk, of a finish and of a merge
// carries on (or starts) after the newer one finished and the stage was published, in-process: the
// published bytes must be those of an undisturbed run, and nothing in the run directory may change
// after the successor finished. Each test fails on the code before fencing.

type Row = Record<string, any>;

const TASKS = Array.from({ length: 6 }, (_, i) => taskRow(`t${i}`));
/** Both agents answer the same bytes for a row, as the simulator does, so an undisturbed run is the reference. */
const answer = (row: Row): Row => ({
  response: { output: [], usage: { input_tokens: 3, output_tokens: 2 } },
  reward: Number(row.task_id.slice(1)) % 2,
});

/** An agent that answers its first `answered` /run calls, then holds every call (and /aggregate_metrics) until released. */
interface StallingAgent extends FakeAgent {
  held: number;
  release(): void;
}

async function startAgent(
  name: string,
  answered = Infinity,
  failsWithoutTrace: (row: Row) => boolean = () => false,
): Promise<StallingAgent> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const agent = {
    name,
    runs: [],
    aggregateRequests: [],
    held: 0,
    release,
    server: undefined as never,
  } as StallingAgent;
  agent.server = await listenJson({
    host: '127.0.0.1',
    port: 0,
    handler: async (request) => {
      const body = request.body as Row;
      const hold = async () => {
        agent.held++;
        await released;
      };
      if (request.path === '/run') {
        agent.runs.push(body);
        if (failsWithoutTrace(body)) return { body: { ...answer(body), _ng_no_persist: true } };
        if (++calls <= answered) return { body: answer(body) };
        await hold();
        // Answered after the takeover, and differently (a real model would): none of it may be published.
        return { body: { ...answer(body), late: true } };
      }
      if (request.path === '/aggregate_metrics') {
        agent.aggregateRequests.push(body);
        if (answered !== Infinity) await hold();
        return { body: computeAggregateMetrics(body.verify_responses) };
      }
      throw new HttpError(404, `no route for ${request.path}`);
    },
  });
  return agent;
}

const servers: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
let steadyHead: RunningServer;

before(async () => {
  const steady = await startAgent('alpha');
  steadyHead = await startFakeHead([steady]);
  servers.push(steady.server, steadyHead);
});

after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One run directory and the plans of two workers sharing it: one reaches the steady agent, one a stalling one. */
async function stage(stalling?: StallingAgent): Promise<{ steady: RunPlan; stalled: RunPlan }> {
  dirs.push(mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-fence-')));
  const dir = dirs.at(-1)!;
  writeJsonl(path.join(dir, 'tasks.jsonl'), TASKS);
  const collect = { num_repeats: 2, chunk_size: 6, max_concurrency: 2 };
  const steady = collectPlan(dir, { head_url: steadyHead.url }, collect);
  let stalled = steady;
  if (stalling) {
    const head = await startFakeHead([stalling]);
    servers.push(stalling.server, head);
    stalled = collectPlan(dir, { head_url: head.url }, collect);
  }
  return { steady, stalled };
}

/** An activity attempt as Temporal would run it: attempts of one activity share its scheduled time. */
const attempt = (scheduledTimestampMs: number, n: number) =>
  new MockActivityEnvironment({
    scheduledTimestampMs,
    currentAttemptScheduledTimestampMs: scheduledTimestampMs,
    attempt: n,
  });

/**
 * An attempt of a given workflow run, scheduled (this attempt) at `current`: what Temporal hands an
 * attempt after an operator's `temporal workflow reset` (a new run, scheduled times kept, attempts
 * from 1) or `temporal activity reset` (attempt 1 again, scheduled now).
 */
const attemptOf = (opts: { scheduled: number; n: number; current?: number; run?: string }) =>
  new MockActivityEnvironment({
    scheduledTimestampMs: opts.scheduled,
    currentAttemptScheduledTimestampMs: opts.current ?? opts.scheduled,
    attempt: opts.n,
    workflowExecution: { workflowId: 'collect', runId: opts.run ?? 'run-a' },
  });

const chunk = (plan: RunPlan, chunkIndex: number, env: MockActivityEnvironment) => {
  const input: ChunkInput = { plan, stage: 'collect', outPrefix: outPrefixOf(plan), chunkIndex };
  return env.run(runChunk, process.env, input) as Promise<ChunkResult>;
};

const finish = (plan: RunPlan, env: MockActivityEnvironment, merged?: MergeProgress) => {
  const input: Parameters<typeof finishStage>[0] = {
    plan,
    stage: 'collect',
    outPrefix: outPrefixOf(plan),
    merged,
    allowPartialRollouts: false,
  };
  return env.run(finishStage, input) as ReturnType<typeof finishStage>;
};

/** Every file under the run directory: its bytes, inode and modification time (a rewrite with the same bytes shows). */
function snapshot(runDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const file = path.join(dir, entry);
      const st = lstatSync(file, { bigint: true });
      if (st.isDirectory()) walk(file);
      else
        out[path.relative(runDir, file)] =
          `${createHash('sha256').update(readFileSync(file)).digest('hex')} ino=${st.ino} mtime=${st.mtimeNs}`;
    }
  };
  walk(runDir);
  return out;
}

const PUBLISHED = [
  'rollouts.jsonl',
  'rollouts_failures.jsonl',
  'rollouts_shards/digests.jsonl',
  'rollouts_reward_profiling.jsonl',
  'rollouts_agent_metrics.json',
  'rollouts_repeat_level_metrics.json',
  'rollouts_aggregate_metrics.json',
];
const published = (plan: RunPlan) =>
  Object.fromEntries(PUBLISHED.map((f) => [f, readFileSync(path.join(plan.runDir, f), 'utf8')]));

let reference: Record<string, string> | undefined;
/** The published files of an undisturbed run of the same tasks. */
async function undisturbed(): Promise<Record<string, string>> {
  if (reference) return reference;
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));
  await finish(steady, attempt(5000, 1));
  return (reference = published(steady));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 10_000) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

/**
 * The superseded attempt, left to run its course (and `lingerMs` more), changed nothing: every file
 * under the run directory is as it was when its successor finished, the published files are an
 * undisturbed run's with each key once, and the attempt failed as superseded.
 */
async function assertChangedNothing(
  plan: RunPlan,
  zombie: Promise<unknown>,
  settled: Record<string, string>,
  expected: Record<string, string>,
  lingerMs: number,
): Promise<void> {
  const outcome = await zombie.then(
    () => 'completed',
    (err: unknown) => String(err),
  );
  await sleep(lingerMs);
  assert.deepEqual(snapshot(plan.runDir), settled, 'nothing in the run directory changed after the successor finished');
  assert.deepEqual(published(plan), expected);
  const keys = readFileSync(`${outPrefixOf(plan)}.jsonl`, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const r = JSON.parse(line) as Row;
      return `${r._ng_task_index}:${r._ng_rollout_index}`;
    });
  assert.equal(new Set(keys).size, keys.length, `duplicate keys in ${keys.join(' ')}`);
  assert.equal(keys.length, TASKS.length * 2);
  assert.match(outcome, /superseded/);
}

test('a chunk attempt that carries on after its successor finished changes nothing its successor wrote or the run published', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 3);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  assert.equal(chunks, 2);
  await chunk(steady, 0, attempt(1000, 1));

  // Attempt 1 of chunk 1 gets three answers, then its worker is cut off from Temporal but not from the disk.
  const first = chunk(stalled, 1, attempt(1001, 1));
  first.catch(() => undefined);
  await until(() => stalling.held >= 1, 'the first attempt waits on the agent');
  await sleep(50);
  // Temporal retries the chunk elsewhere; it finishes, and the stage is merged and published.
  const second = await chunk(steady, 1, attempt(1001, 2));
  assert.equal(second.alreadyDone + second.completed, 6);
  assert.ok(second.alreadyDone >= 3, `the successor kept the first attempt's whole lines (${second.alreadyDone})`);
  await finish(steady, attempt(5000, 1));
  const settled = snapshot(steady.runDir);

  // The cut-off attempt wakes up with answers for the rows it held.
  stalling.release();
  // Longer than a heartbeat, so a look at the fence and any write after it would have happened.
  await assertChangedNothing(steady, first, settled, expected, 1500);

  // The shard says which attempt it took over, and what it kept.
  const sidecars = Object.keys(settled).filter((f) => f.endsWith('_superseded.jsonl'));
  assert.equal(sidecars.length, 1, `one sidecar: ${Object.keys(settled).join(' ')}`);
  const [record] = readFileSync(path.join(steady.runDir, sidecars[0]!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  assert.match(record!.attempt, /^\d+-1001-1-\w+$/);
  assert.match(record!.superseded_by, /^\d+-1001-2-\w+$/);
  assert.equal(record!.rollout_lines_kept, second.alreadyDone);
});

test('a chunk attempt that starts after its successor finished creates nothing', async () => {
  const expected = await undisturbed();
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 2));
  await finish(steady, attempt(5000, 1));
  const settled = snapshot(steady.runDir);
  // Attempt 1 of chunk 1, delivered to a worker before its partition and run after it healed.
  await assertChangedNothing(steady, chunk(steady, 1, attempt(1001, 1)), settled, expected, 0);
});

test('a finish attempt that carries on after its successor finished publishes nothing', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 0);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));

  // Attempt 1 of the finish merges and profiles, then waits on /aggregate_metrics: cut off there.
  const first = finish(stalled, attempt(5000, 1));
  first.catch(() => undefined);
  await until(() => stalling.held >= 1, 'the first finish waits on the agent');
  const second = await finish(steady, attempt(5000, 2));
  assert.equal(second.merge.completed, TASKS.length * 2);
  const settled = snapshot(steady.runDir);

  stalling.release();
  await assertChangedNothing(steady, first, settled, expected, 200);
});

test('a merge attempt that starts after the stage was published touches nothing', async () => {
  const expected = await undisturbed();
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));
  const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
  // Attempt 2 of the merge of chunk 0 ran while attempt 1 was stuck before its first write.
  const merged = (await attempt(3000, 2).run(mergeChunks, mergeInput)) as MergeProgress;
  await finish(steady, attempt(5000, 1), merged);
  const settled = snapshot(steady.runDir);

  await assertChangedNothing(steady, attempt(3000, 1).run(mergeChunks, mergeInput), settled, expected, 0);
});

test('a chunk an operator resets at attempt 3 (attempt 1 again, scheduled now) completes and the stage publishes the undisturbed bytes', async () => {
  const expected = await undisturbed();
  const stalling = await startAgent('alpha', 3);
  const { steady, stalled } = await stage(stalling);
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) if (i !== 1) await chunk(steady, i, attemptOf({ scheduled: 1000 + i, n: 1 }));
  // Attempt 3 of chunk 1 answers three rows, then hangs on the agent.
  const third = chunk(stalled, 1, attemptOf({ scheduled: 1001, n: 3, current: 1003 }));
  third.catch(() => undefined);
  await until(() => stalling.held >= 1, 'attempt 3 waits on the agent');
  // `temporal activity reset`: the attempt count returns to one.
  const reset = await chunk(steady, 1, attemptOf({ scheduled: 1001, n: 1, current: 9000 }));
  assert.ok(reset.alreadyDone >= 3, `the reset attempt kept attempt 3's whole lines (${reset.alreadyDone})`);
  await finish(steady, attemptOf({ scheduled: 5000, n: 1 }));
  const settled = snapshot(steady.runDir);
  stalling.release();
  await assertChangedNothing(steady, third, settled, expected, 1500);
});

for (const mergedBeforeReset of [false, true]) {
  test(`a workflow reset ${mergedBeforeReset ? 'after' : 'before'} a merge, with a chunk at attempt 2, publishes the undisturbed bytes and the old run's attempt changes nothing`, async () => {
    const expected = await undisturbed();
    const stalling = await startAgent('alpha', 2);
    const { steady, stalled } = await stage(stalling);
    const { chunks } = await materialize(steady);
    await chunk(steady, 0, attemptOf({ scheduled: 1000, n: 1 }));
    // Run A: attempt 2 of chunk 1 answers two rows, then hangs on the agent (its host is cut off).
    const old = chunk(stalled, 1, attemptOf({ scheduled: 1001, n: 2, current: 1002 }));
    old.catch(() => undefined);
    await until(() => stalling.held >= 1, "run A's attempt 2 waits on the agent");
    const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
    const mergedA = (await attemptOf({ scheduled: 3000, n: 1 }).run(mergeChunks, mergeInput)) as MergeProgress;
    // Run B, the reset run: the same scheduled times, attempts counted from 1 again. Reset after the
    // merge completed, B goes on from its progress; reset before, B runs the merge again.
    const inB = (scheduled: number) => attemptOf({ scheduled, n: 1, run: 'run-b' });
    for (let i = 1; i < chunks; i++) await chunk(steady, i, inB(1000 + i));
    const merged = mergedBeforeReset ? mergedA : ((await inB(3000).run(mergeChunks, mergeInput)) as MergeProgress);
    await finish(steady, inB(5000), merged);
    const settled = snapshot(steady.runDir);
    stalling.release();
    await assertChangedNothing(steady, old, settled, expected, 1500);
  });
}

test('a run resumed after a cancel, with a key re-run, publishes the undisturbed bytes while the cancelled finish still writes', async (t) => {
  const expected = await undisturbed();
  // Run A's agent fails one key without a trace (`_ng_no_persist`), so the resumed run runs it again.
  const flaky = await startAgent('alpha', Infinity, (row) => row.task_id === 't0');
  const { steady: resumed, stalled: cancelled } = await stage(flaky);
  const { chunks } = await materialize(resumed);
  for (let i = 0; i < chunks; i++) await chunk(cancelled, i, attemptOf({ scheduled: 1000 + i, n: 1 }));
  const mergeInput = { outPrefix: outPrefixOf(resumed), from: NOTHING_MERGED, to: 1 };
  const mergedA = (await attemptOf({ scheduled: 3000, n: 1 }).run(mergeChunks, mergeInput)) as MergeProgress;
  // Run A's finish holds between its look at the fence and its write of chunk 1, when it is cancelled.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let paused = false;
  t.after(
    // Only run A's finish reaches the point before run B starts; B's merges pass.
    onPause('merge.checked', async () => {
      if (paused) return;
      paused = true;
      await released;
    }),
  );
  const finishA = attemptOf({ scheduled: 5000, n: 1 });
  const oldFinish = finish(cancelled, finishA, mergedA);
  oldFinish.catch(() => undefined);
  await until(() => paused, "run A's finish holds mid-merge");
  finishA.cancel();
  // Run B resumes the same run directory from scratch: every chunk again (t0's rows run now), then its finish.
  const inB = (scheduled: number) => attemptOf({ scheduled, n: 1, run: 'run-b' });
  for (let i = 0; i < chunks; i++) await chunk(resumed, i, inB(1000 + i));
  await finish(resumed, inB(5000));
  const settled = snapshot(resumed.runDir);
  release();
  await assertChangedNothing(resumed, oldFinish, settled, expected, 500);
});

for (const [point, step] of [
  ['fence.claimed', 'chunk'],
  ['chunk.opened', 'chunk'],
  ['merge.renamed', 'merge'],
  ['finish.checked', 'finish'],
] as const) {
  test(`a ${step} attempt held at ${point} that wakes after its successor finished re-creates nothing`, async (t) => {
    const expected = await undisturbed();
    const { steady } = await stage();
    const { chunks } = await materialize(steady);
    for (let i = 0; i < chunks; i++) if (step !== 'chunk' || i !== 1) await chunk(steady, i, attempt(1000 + i, 1));
    const mergeInput = { outPrefix: outPrefixOf(steady), from: NOTHING_MERGED, to: 1 };
    const mergedFirst = (await attempt(3000, 1).run(mergeChunks, mergeInput)) as MergeProgress;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    t.after(
      onPause(point, async () => {
        if (held) return;
        held = true;
        await released;
      }),
    );
    const rest = { ...mergeInput, from: mergedFirst, to: chunks };
    const run = (n: number): Promise<unknown> => {
      if (step === 'chunk') return chunk(steady, 1, attempt(1001, n));
      if (step === 'merge') return attempt(3500, n).run(mergeChunks, rest);
      return finish(steady, attempt(5000, n), mergedFirst);
    };
    const first = run(1);
    first.catch(() => undefined);
    await until(() => held, `the first ${step} attempt holds at ${point}`);
    const second = await run(2);
    if (step !== 'finish')
      await finish(steady, attempt(5000, 1), step === 'merge' ? (second as MergeProgress) : mergedFirst);
    const settled = snapshot(steady.runDir);
    release();
    await assertChangedNothing(steady, first, settled, expected, 200);
  });
}
