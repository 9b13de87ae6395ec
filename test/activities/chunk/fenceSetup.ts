import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runChunk } from '../../../activities/chunk/chunk';
import { finishStage } from '../../../activities/stage/finishStage';
import type { ChunkInput, ChunkResult, MergeProgress, RunPlan } from '../../../contracts/payloads';
import { computeAggregateMetrics } from '../../../gym/aggregateMetrics';
import { HttpError, listenJson, type RunningServer } from '../../../servers/http';
import { collectPlan, materialize, outPrefixOf, startFakeHead, taskRow, writeJsonl, type FakeAgent } from '../fakeGym';

// Shared setup of the fencing tests (fence.test.ts, fenceResets.test.ts, fencePauses.test.ts): a
// steady agent and stalling ones behind fake heads, run directories two workers share, activity
// attempts as Temporal would run them, and the check that a superseded attempt changed nothing.

export type Row = Record<string, any>;

export const TASKS = Array.from({ length: 6 }, (_, i) => taskRow(`t${i}`));
/** Both agents answer the same bytes for a row, as the simulator does, so an undisturbed run is the reference. */
const answer = (row: Row): Row => ({
  response: { output: [], usage: { input_tokens: 3, output_tokens: 2 } },
  reward: Number(row.task_id.slice(1)) % 2,
});

/** An agent that answers its first `answered` /run calls, then holds every call (and /aggregate_metrics) until released. */
export interface StallingAgent extends FakeAgent {
  held: number;
  release(): void;
}

export async function startAgent(
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
export async function stage(stalling?: StallingAgent): Promise<{ steady: RunPlan; stalled: RunPlan }> {
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
export const attempt = (scheduledTimestampMs: number, n: number) =>
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
export const attemptOf = (opts: { scheduled: number; n: number; current?: number; run?: string }) =>
  new MockActivityEnvironment({
    scheduledTimestampMs: opts.scheduled,
    currentAttemptScheduledTimestampMs: opts.current ?? opts.scheduled,
    attempt: opts.n,
    workflowExecution: { workflowId: 'collect', runId: opts.run ?? 'run-a' },
  });

export const chunk = (plan: RunPlan, chunkIndex: number, env: MockActivityEnvironment) => {
  const input: ChunkInput = { plan, stage: 'collect', outPrefix: outPrefixOf(plan), chunkIndex };
  return env.run(runChunk, process.env, input) as Promise<ChunkResult>;
};

export const finish = (plan: RunPlan, env: MockActivityEnvironment, merged?: MergeProgress) => {
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
export function snapshot(runDir: string): Record<string, string> {
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
export async function undisturbed(): Promise<Record<string, string>> {
  if (reference) return reference;
  const { steady } = await stage();
  const { chunks } = await materialize(steady);
  for (let i = 0; i < chunks; i++) await chunk(steady, i, attempt(1000 + i, 1));
  await finish(steady, attempt(5000, 1));
  return (reference = published(steady));
}

export async function until(condition: () => boolean, what: string): Promise<void> {
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
export async function assertChangedNothing(
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
