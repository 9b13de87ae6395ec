import { open, rm, type FileHandle } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { ConfigError } from '../contracts/errors';
import { stageSettings } from '../contracts/stageSettings';
import type { RolloutStage, RunPlan } from '../contracts/payloads';
import { aggregateMetricsPath, aggregateMetricsSchema, stripForAggregateMetrics, typedAggregateMetrics, type AggregateMetrics } from '../gym/aggregateMetrics';
import { AggregateMetricsWriter, type EntryValues } from '../gym/aggregateMetricsFile';
import { jsonText, JsonlWriter, readJsonl, readLines } from '../gym/jsonl';
import { parseKinded, type JsonDict, type KindedJson } from '../gym/kindedJson';
import type { PyValue } from '../gym/pythonJson';
import { postJsonText, RequestFailure } from './http/client';
import { mergedDigestsPath } from './chunkIndex';
import { agentDirectory } from './servers';
import { stageFence, type Fence } from './fence';
import { KeyedTable, NumberColumn } from '../gym/rewardProfile/table';

// `<stem>_aggregate_metrics.json` beside the merged rollouts, as ng_collect_rollouts writes it after
// collecting (rollout_collection.py RolloutCollectionHelper._call_aggregate_metrics): the completed
// rollouts sorted by key, grouped by agent, each group stripped and posted to that agent's
// POST /aggregate_metrics, one entry per agent. The stripped rollouts are the merge's digests
// (activities/shardLines.ts), so nothing here decodes a trajectory.

type Row = Record<string, unknown>;

/** The most bytes read at once when lines follow each other. */
const RUN_BYTES = 1 << 20;

/** Where one agent's rollouts are in the file, as columns: a few bytes per rollout however large the trajectories. */
class Places extends KeyedTable {
  private readonly offset = new NumberColumn();
  private readonly size = new NumberColumn();

  add(task: number, rollout: number, offset: number, size: number): void {
    const i = this.addKey(task, rollout);
    this.offset.set(i, offset);
    this.size.set(i, size);
  }

  /**
   * The lines in key order. Lines that follow each other in the file are read together (the merged
   * file is in key order already, so usually all of them are): one read a run, not one a line.
   */
  async *lines(file: FileHandle): AsyncGenerator<string> {
    const order = this.keyOrder();
    for (let first = 0; first < order.length; ) {
      let last = first;
      let end = this.offset.get(order[first]!) + this.size.get(order[first]!);
      while (last + 1 < order.length && this.offset.get(order[last + 1]!) === end + 1 && end - this.offset.get(order[first]!) < RUN_BYTES) {
        last++;
        end = this.offset.get(order[last]!) + this.size.get(order[last]!);
      }
      const start = this.offset.get(order[first]!);
      const run = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await file.read(run, 0, run.length, start);
      if (bytesRead < run.length) throw new Error(`the file ended before byte ${end}`);
      for (let j = first; j <= last; j++) {
        const at = this.offset.get(order[j]!) - start;
        yield run.toString('utf8', at, at + this.size.get(order[j]!));
      }
      first = last + 1;
    }
  }
}

/** A digest that cannot stand in for the rollout's entry: the entries are then made from the rollouts file. */
class NoDigest extends Error {}

/** One agent's entries in key order, as many times as they are read. */
type EntrySource = (file: FileHandle) => AsyncIterable<string>;

interface EntryLine {
  text: string;
  agent: string | undefined;
  task: number;
  rollout: number;
}

async function* entryLines(entriesPath: string): AsyncGenerator<EntryLine & { byteOffset: number; size: number }> {
  for await (const { text, byteOffset, byteLength, terminated } of readLines(entriesPath)) {
    const row = JSON.parse(text) as Row | null;
    if (row === null) throw new NoDigest();
    const ref = row.agent_ref as { name?: unknown } | undefined;
    // Upstream skips results whose agent_ref has no (truthy) name.
    const agent = typeof ref?.name === 'string' && ref.name !== '' ? ref.name : undefined;
    yield { text, agent, task: row._ng_task_index as number, rollout: row._ng_rollout_index as number, byteOffset, size: byteLength - (terminated ? 1 : 0) };
  }
}

/** An agent's lines of an entries file in key order: the file's own order, filtered. */
async function* agentLinesInFileOrder(entriesPath: string, agent: string, everyLine: boolean): AsyncGenerator<string> {
  if (everyLine) {
    for await (const { text } of readLines(entriesPath)) yield text;
    return;
  }
  for await (const line of entryLines(entriesPath)) if (line.agent === agent) yield line.text;
}

/**
 * Each agent's entries in the entries file (one `/aggregate_metrics` entry per rollout, in the
 * rollouts' order), agents in the order their first rollout has after sorting, which is NeMo Gym's
 * order when its agents answer in turn. A file in key order (a merged stage's is) is read again for
 * each agent as it is; any other is sorted through each agent's places, a few bytes a rollout.
 */
async function entriesByAgent(entriesPath: string): Promise<Map<string, EntrySource>> {
  const agents: string[] = [];
  let named = 0;
  let lines = 0;
  let previous: EntryLine | undefined;
  let inKeyOrder = true;
  for await (const line of entryLines(entriesPath)) {
    lines++;
    if (previous && (line.task < previous.task || (line.task === previous.task && line.rollout <= previous.rollout))) inKeyOrder = false;
    previous = line;
    if (line.agent === undefined) continue;
    named++;
    if (!agents.includes(line.agent)) agents.push(line.agent);
  }
  if (inKeyOrder) {
    const everyLine = agents.length === 1 && named === lines;
    return new Map(agents.map((agent) => [agent, () => agentLinesInFileOrder(entriesPath, agent, everyLine)]));
  }
  const byAgent = new Map<string, Places>();
  for await (const { agent, task, rollout, byteOffset, size } of entryLines(entriesPath)) {
    if (agent === undefined) continue;
    let places = byAgent.get(agent);
    if (!places) byAgent.set(agent, (places = new Places()));
    places.add(task, rollout, byteOffset, size);
  }
  const first = (places: Places) => places.keyOrder()[0]!;
  return new Map(
    [...byAgent]
      .sort(([, a], [, b]) => a.task.get(first(a)) - b.task.get(first(b)) || a.rollout.get(first(a)) - b.rollout.get(first(b)))
      .map(([agent, places]) => [agent, (file: FileHandle) => places.lines(file)]),
  );
}

/** The digests' entries by agent, or undefined when a rollout has no digest. */
async function entriesOfDigests(digestsPath: string): Promise<Map<string, EntrySource> | undefined> {
  try {
    return await entriesByAgent(digestsPath);
  } catch (err) {
    if (err instanceof NoDigest) return undefined;
    throw err;
  }
}

/**
 * Every rollout's entry made from the rollouts file, for stages merged before there were digests and
 * for rollouts whose `response` is not an object (which have none). Written under a name of this
 * attempt's own beside the rollouts, out of the way of a retried attempt still running.
 */
async function entriesOfRollouts(rolloutsPath: string): Promise<string> {
  const out = `${rolloutsPath}.aggregate-entries-${process.pid}-${Date.now()}.tmp`;
  const writer = await JsonlWriter.open(out);
  try {
    for await (const { text } of readJsonl(rolloutsPath)) await writer.writeLine(`${jsonText(stripForAggregateMetrics(parseKinded(text).kinded as JsonDict))}\n`);
  } finally {
    await writer.close();
  }
  return out;
}

/** The request body, streamed in pieces so the worker never holds the whole run's results. */
async function* requestBody(lines: AsyncIterable<string>): AsyncGenerator<string> {
  let piece = '{"verify_responses":[';
  let first = true;
  for await (const line of lines) {
    piece += (first ? '' : ',') + line;
    first = false;
    if (piece.length >= 1 << 16) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}]}`;
}

/** The agent's answer as entry values, with the number kinds of its bytes (NeMo Gym writes them back with orjson). */
export async function askAgent(name: string, baseUrl: string, lines: () => AsyncIterable<string>, timeoutMs: number): Promise<EntryValues> {
  const url = new URL('/aggregate_metrics', baseUrl).toString();
  let raw: KindedJson;
  try {
    raw = (await postJsonText(url, () => requestBody(lines()), { timeoutMs, connections: 1, parse: parseKinded })) as KindedJson;
  } catch (err) {
    // A refusal (4xx) will not change on retry; NeMo Gym's collection fails on it too (raise_for_status).
    if (err instanceof RequestFailure && !err.retryable && err.failureClass !== 'cancelled') {
      throw new ConfigError(`agent "${name}" cannot aggregate metrics: ${err.message}; NeMo Gym agents answer POST /aggregate_metrics, which ng_collect_rollouts calls after collecting`);
    }
    throw err;
  }
  const parsed = aggregateMetricsSchema.safeParse(raw.plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RequestFailure('invalid_response', `${url} answered something that is not AggregateMetrics: ${issue?.path.join('.')}: ${issue?.message}`, true);
  }
  return entryValues(parsed.data, raw.kinded);
}

/** Fields the schema defaulted stay defaulted; present ones are taken with their kinds. */
function entryValues(metrics: AggregateMetrics, kinded: unknown): EntryValues {
  const plainValues: EntryValues = { agentMetrics: metrics.agent_metrics, keyMetrics: metrics.key_metrics, groups: metrics.group_level_metrics };
  if (!(kinded instanceof Map)) return plainValues;
  return {
    agentMetrics: (kinded.get('agent_metrics') as PyValue | undefined) ?? plainValues.agentMetrics,
    keyMetrics: (kinded.get('key_metrics') as PyValue | undefined) ?? plainValues.keyMetrics,
    groups: (kinded.get('group_level_metrics') as PyValue[] | undefined) ?? plainValues.groups,
  };
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
export async function writeAggregateMetrics(input: AggregateMetricsInput, fence?: Fence): Promise<string | undefined> {
  const outPrefix = input.rolloutsPath.replace(/\.jsonl$/, '');
  let publishing = fence;
  if (!publishing) {
    // Run as an activity of its own (histories begun before finishStage): a step of the stage's fence.
    publishing = stageFence(outPrefix);
    await publishing.check();
    await publishing.claim();
  }
  const digestsPath = await mergedDigestsPath(outPrefix);
  const entries = digestsPath && (await entriesOfDigests(digestsPath));
  if (digestsPath && entries) return writeEntries(input, digestsPath, entries, publishing);
  const entriesPath = await entriesOfRollouts(input.rolloutsPath);
  try {
    return await writeEntries(input, entriesPath, await entriesByAgent(entriesPath), publishing);
  } finally {
    await rm(entriesPath, { force: true });
  }
}

interface AggregateMetricsInput {
  plan: RunPlan;
  stage: RolloutStage;
  rolloutsPath: string;
}

async function writeEntries(input: AggregateMetricsInput, entriesPath: string, byAgent: Map<string, EntrySource>, fence: Fence): Promise<string | undefined> {
  if (byAgent.size === 0) return undefined;
  const timeoutMs = stageSettings(input.plan, input.stage).requestTimeoutMs;
  const serving = servingAgent(input.plan, input.stage);
  const agents = serving && (await agentDirectory(input.plan));
  const out = aggregateMetricsPath(input.rolloutsPath);
  // A name of this attempt's own, published by a fenced rename: a re-run finish and an older one
  // still running never write the same file (docs/fencing.md).
  const tmp = `${out}.${fence.token.name}.tmp`;
  const file = await open(entriesPath, 'r');
  const writer = await open(tmp, 'w');
  const entries = new AggregateMetricsWriter(writer);
  let written = 0;
  const beat = setInterval(() => heartbeat({ aggregateMetrics: written }), 5000);
  try {
    for (const [name, source] of byAgent) {
      const lines = () => source(file);
      let values: EntryValues;
      if (serving && agents) {
        const server = serving(name);
        const baseUrl = agents.get(server);
        if (!baseUrl) throw new ConfigError(`${input.rolloutsPath}: agent "${server}" is no longer served, so its metrics cannot be aggregated`);
        values = await askAgent(server, baseUrl, lines, timeoutMs);
      } else {
        // Read with the Python types of the lines' numbers, so the file has NeMo Gym's bytes.
        values = await typedAggregateMetrics(lines);
      }
      await entries.entry(name, values);
      written++;
    }
    await entries.close();
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  } finally {
    clearInterval(beat);
    await writer.close();
    await file.close();
  }
  try {
    await fence.publish([[tmp, out]]);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return out;
}
