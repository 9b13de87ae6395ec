import { open, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { ConfigError } from '../contracts/errors';
import { stageSettings } from '../contracts/stageSettings';
import type { RolloutStage, RunPlan } from '../contracts/payloads';
import {
  aggregateMetricsEntry,
  aggregateMetricsPath,
  aggregateMetricsSchema,
  computeAggregateMetrics,
  formatAggregateMetricsFile,
  numericView,
  stripForAggregateMetrics,
  type AggregateMetrics,
  type AggregateMetricsEntry,
} from '../gym/aggregateMetrics';
import { readJsonl } from '../gym/jsonl';
import { postJsonText, RequestFailure } from './http/client';
import { agentDirectory } from './servers';

// `<stem>_aggregate_metrics.json` beside the merged rollouts, as ng_collect_rollouts writes it after
// collecting (rollout_collection.py RolloutCollectionHelper._call_aggregate_metrics): the completed
// rollouts sorted by key, grouped by agent, each group stripped and posted to that agent's
// POST /aggregate_metrics, one entry per agent.

type Row = Record<string, unknown>;

interface Place {
  task: number;
  rollout: number;
  offset: number;
  length: number;
}

const byKey = (a: Place, b: Place) => a.task - b.task || a.rollout - b.rollout;

/**
 * Where each agent's rollouts are in the file, in key order. Only places are kept, so memory holds
 * a few numbers per rollout however large the trajectories. Agents come in the order their first
 * rollout has after sorting, which is NeMo Gym's order when its agents answer in turn.
 */
async function placesByAgent(rolloutsPath: string): Promise<Map<string, Place[]>> {
  const byAgent = new Map<string, Place[]>();
  for await (const { value, byteOffset, byteLength } of readJsonl(rolloutsPath)) {
    const row = value as Row;
    const ref = row.agent_ref as { name?: unknown } | undefined;
    // Upstream skips results whose agent_ref has no (truthy) name.
    if (typeof ref?.name !== 'string' || ref.name === '') continue;
    const place = { task: row._ng_task_index as number, rollout: row._ng_rollout_index as number, offset: byteOffset, length: byteLength };
    const places = byAgent.get(ref.name);
    if (places) places.push(place);
    else byAgent.set(ref.name, [place]);
  }
  for (const places of byAgent.values()) places.sort(byKey);
  return new Map([...byAgent].sort(([, a], [, b]) => byKey(a[0]!, b[0]!)));
}

async function readPlace(file: FileHandle, place: Place): Promise<Row> {
  const buf = Buffer.alloc(place.length);
  await file.read(buf, 0, place.length, place.offset);
  return JSON.parse(buf.toString('utf8')) as Row;
}

/** The request body, streamed in pieces so the worker never holds the whole run's results. */
async function* requestBody(file: FileHandle, places: readonly Place[]): AsyncGenerator<string> {
  let piece = '{"verify_responses":[';
  for (let i = 0; i < places.length; i++) {
    piece += (i === 0 ? '' : ',') + JSON.stringify(stripForAggregateMetrics(await readPlace(file, places[i]!)));
    if (piece.length >= 1 << 16) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}]}`;
}

async function askAgent(name: string, baseUrl: string, file: FileHandle, places: readonly Place[], timeoutMs: number): Promise<AggregateMetrics> {
  const url = new URL('/aggregate_metrics', baseUrl).toString();
  let raw: unknown;
  try {
    raw = await postJsonText(url, () => requestBody(file, places), { timeoutMs, connections: 1 });
  } catch (err) {
    // A refusal (4xx) will not change on retry; NeMo Gym's collection fails on it too (raise_for_status).
    if (err instanceof RequestFailure && !err.retryable && err.failureClass !== 'cancelled') {
      throw new ConfigError(`agent "${name}" cannot aggregate metrics: ${err.message}; NeMo Gym agents answer POST /aggregate_metrics, which ng_collect_rollouts calls after collecting`);
    }
    throw err;
  }
  const parsed = aggregateMetricsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RequestFailure('invalid_response', `${url} answered something that is not AggregateMetrics: ${issue?.path.join('.')}: ${issue?.message}`, true);
  }
  return parsed.data;
}

/**
 * The agent server that ran the rollouts of a row naming `agent_ref.name`, or undefined when no
 * server did: collect posts each row to its own agent; local profiling either runs every row through
 * one NeMo Gym agent or runs them in-process (the single-step executor is agent and verifier in one).
 */
function servingAgent(plan: RunPlan, stage: RolloutStage): ((rowAgent: string) => string) | undefined {
  if (stage === 'collect') return (rowAgent) => rowAgent;
  const lp = plan.config.local_profile;
  if (lp.verifier !== 'nemo_gym_agent') return undefined;
  const name = lp.agent_name ?? stageSettings(plan, stage).agentName;
  return () => name;
}

/**
 * Writes the aggregate metrics of a merged stage and returns the path, or nothing when no rollout
 * completed (upstream writes no file then). Rollouts an agent server ran are aggregated by that
 * agent; in-process ones get what a NeMo Gym pivot agent answers by default, the same computation
 * the embedded resources server runs. Entries are named by the rows' `agent_ref`, as upstream's are.
 */
export async function writeAggregateMetrics(input: { plan: RunPlan; stage: RolloutStage; rolloutsPath: string }): Promise<string | undefined> {
  const places = await placesByAgent(input.rolloutsPath);
  if (places.size === 0) return undefined;
  const timeoutMs = stageSettings(input.plan, input.stage).requestTimeoutMs;
  const serving = servingAgent(input.plan, input.stage);
  const agents = serving && (await agentDirectory(input.plan));
  const entries: AggregateMetricsEntry[] = [];
  const file = await open(input.rolloutsPath, 'r');
  const beat = setInterval(() => heartbeat({ aggregateMetrics: entries.length }), 5000);
  try {
    for (const [name, agentPlaces] of places) {
      let metrics: AggregateMetrics;
      if (serving && agents) {
        const server = serving(name);
        const baseUrl = agents.get(server);
        if (!baseUrl) throw new ConfigError(`${input.rolloutsPath}: agent "${server}" is no longer served, so its metrics cannot be aggregated`);
        metrics = await askAgent(server, baseUrl, file, agentPlaces, timeoutMs);
      } else {
        // Numeric views only: they are all the computation reads, and a few numbers per rollout.
        const results: Row[] = [];
        for (const place of agentPlaces) results.push(numericView(stripForAggregateMetrics(await readPlace(file, place))));
        metrics = computeAggregateMetrics(results);
      }
      entries.push(aggregateMetricsEntry(name, metrics));
    }
  } finally {
    clearInterval(beat);
    await file.close();
  }
  const out = aggregateMetricsPath(input.rolloutsPath);
  await writeFile(`${out}.tmp`, formatAggregateMetricsFile(entries));
  await rename(`${out}.tmp`, out);
  return out;
}
