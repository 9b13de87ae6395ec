import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runChunk } from '../../activities/chunk/chunk';
import { materializeStage } from '../../activities/stage/materialize';
import { finishStage } from '../../activities/stage/finishStage';
import { pipelineConfigSchema } from '../../contracts/config';
import type {
  ChunkInput,
  ChunkResult,
  CollectStageInput,
  MaterializeResult,
  MergeResult,
  RunPlan,
} from '../../contracts/payloads';
import { computeAggregateMetrics } from '../../gym/aggregateMetrics';
import { startHeadServer } from '../../servers/head';
import { HttpError, listenJson, type RunningServer } from '../../servers/http';

// NeMo Gym-shaped fakes for activity tests: agents whose /run answers are scripted per row, a head
// server listing them, and the collect activities run in-process (no Temporal server needed).

type Row = Record<string, any>;
/** The /run result for a row (`attempt` counts from 1 per row), or an HTTP status to answer with. */
type Answer = (row: Row, attempt: number) => Row | number | Promise<Row | number>;

export interface FakeAgent {
  name: string;
  server: RunningServer;
  /** Every row posted to /run, in arrival order. */
  runs: Row[];
  /** Every /aggregate_metrics request body. */
  aggregateRequests: Row[];
}

export async function startFakeAgent(name: string, answer: Answer): Promise<FakeAgent> {
  const agent: FakeAgent = { name, server: undefined as never, runs: [], aggregateRequests: [] };
  const attempts = new Map<string, number>();
  agent.server = await listenJson({
    host: '127.0.0.1',
    port: 0,
    handler: async (request) => {
      const body = request.body as Row;
      if (request.path === '/run') {
        agent.runs.push(body);
        // Rows are told apart by content too, so tests sharing an agent do not share attempt counts.
        const key = `${body.task_id}|${body._ng_task_index}:${body._ng_rollout_index}`;
        const attempt = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, attempt);
        const result = await answer(body, attempt);
        if (typeof result === 'number') throw new HttpError(result, `scripted ${result}`);
        return { body: result };
      }
      if (request.path === '/aggregate_metrics') {
        agent.aggregateRequests.push(body);
        return { body: computeAggregateMetrics(body.verify_responses) };
      }
      throw new HttpError(404, `no route for ${request.path}`);
    },
  });
  return agent;
}

/** A head server whose global config lists the agents (and one resources server, which is not an agent), and `extra` blocks. */
export async function startFakeHead(agents: FakeAgent[], extra: Record<string, unknown> = {}): Promise<RunningServer> {
  return startHeadServer({
    globalConfigDict: () => ({
      head_server: { host: '127.0.0.1', port: 0 },
      some_resources_server: { resources_servers: { tools: { host: '127.0.0.1', port: 1 } } },
      ...Object.fromEntries(
        agents.map((a) => [
          a.name,
          { responses_api_agents: { fake_agent: { host: a.server.host, port: a.server.port } } },
        ]),
      ),
      ...extra,
    }),
  });
}

/** A test file's fake NeMo Gym: its agents and the head server listing them, and its temporary directories. */
export interface FakeGym<Name extends string> {
  agents: Record<Name, FakeAgent>;
  head: RunningServer;
  /** A new temporary directory, removed after the file's tests. */
  freshDir: () => string;
  /**
   * Resolves once the agents and the head server are up, for a `before` of the file that needs them:
   * node runs a file's `before` hooks side by side, not one after the other.
   */
  started: () => Promise<void>;
}

/**
 * Starts an agent per entry of `answers` (in order, named by its key) and a head server listing them
 * before the calling file's tests, and closes them and removes its fresh directories after them.
 */
export function fakeGymForFile<Name extends string>(answers: Record<Name, Answer>, dirPrefix: string): FakeGym<Name> {
  const dirs: string[] = [];
  let starting: Promise<void> | undefined;
  const gym: FakeGym<Name> = {
    agents: {} as Record<Name, FakeAgent>,
    head: undefined as never,
    freshDir: () => {
      dirs.push(mkdtempSync(path.join(os.tmpdir(), dirPrefix)));
      return dirs.at(-1)!;
    },
    started: () =>
      (starting ??= (async () => {
        for (const [name, answer] of Object.entries<Answer>(answers)) {
          gym.agents[name as Name] = await startFakeAgent(name, answer);
        }
        gym.head = await startFakeHead(Object.values(gym.agents));
      })()),
  };
  before(() => gym.started());
  after(async () => {
    const agents = Object.values<FakeAgent>(gym.agents);
    await Promise.all([...agents.map((agent) => agent.server.close()), gym.head?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return gym;
}

export function writeJsonl(file: string, rows: unknown[]): void {
  writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

export function taskRow(taskId: string, extra: Row = {}): Row {
  return {
    task_id: taskId,
    responses_create_params: { input: [{ role: 'user', content: `task ${taskId}` }] },
    ...extra,
  };
}

export function collectPlan(baseDir: string, servers: Row, collect: Row = {}, otherStages: Row = {}): RunPlan {
  const runDir = path.join(baseDir, 'run');
  mkdirSync(runDir, { recursive: true });
  const config = pipelineConfigSchema.parse({
    name: 'fake',
    servers: { mode: 'attach', ...servers },
    collect: {
      input_jsonl: 'tasks.jsonl',
      agent_name: 'alpha',
      num_repeats: 1,
      chunk_size: 4,
      seed_per_repeat: false,
      ...collect,
    },
    ...otherStages,
  });
  return { runId: 'fake', runDir, baseDir, config };
}

export function outPrefixOf(plan: RunPlan): string {
  return path.join(plan.runDir, 'rollouts');
}

export async function materialize(plan: RunPlan): Promise<MaterializeResult> {
  const input: CollectStageInput = { plan, stage: 'collect', inputPath: 'tasks.jsonl', outPrefix: outPrefixOf(plan) };
  return new MockActivityEnvironment().run(materializeStage, input);
}

function runChunkActivity(plan: RunPlan, chunkIndex: number): Promise<ChunkResult> {
  const input: ChunkInput = { plan, stage: 'collect', outPrefix: outPrefixOf(plan), chunkIndex };
  return new MockActivityEnvironment().run(runChunk, process.env, input);
}

export async function runChunks(plan: RunPlan, chunks: number): Promise<ChunkResult[]> {
  const results: ChunkResult[] = [];
  for (let chunkIndex = 0; chunkIndex < chunks; chunkIndex++) results.push(await runChunkActivity(plan, chunkIndex));
  return results;
}

/** All chunks at once, started in index order, as a worker runs a workflow's window of chunks. */
export function runChunksSideBySide(plan: RunPlan, chunks: number): Promise<ChunkResult[]> {
  return Promise.all(Array.from({ length: chunks }, (_, chunkIndex) => runChunkActivity(plan, chunkIndex)));
}

/** The stage's tail after its chunks (merge, reward profile, aggregate metrics), for tests that read the merged files. */
export async function merge(plan: RunPlan): Promise<MergeResult> {
  const input: Parameters<typeof finishStage>[0] = {
    plan,
    stage: 'collect',
    outPrefix: outPrefixOf(plan),
    allowPartialRollouts: true,
  };
  const { merge: merged } = (await new MockActivityEnvironment().run(finishStage, input)) as Awaited<
    ReturnType<typeof finishStage>
  >;
  return merged;
}
