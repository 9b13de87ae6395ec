import { open, rm } from 'node:fs/promises';
import { heartbeat, log } from '@temporalio/activity';
import type { z } from 'zod';
import { ConfigError } from '../../contracts/errors';
import { pivotAgentName, stageSettings } from '../../contracts/stageSettings';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';
import {
  aggregateMetricsPath,
  aggregateMetricsSchema,
  entryFor040,
  typedAggregateMetrics,
  type AggregateMetrics,
} from '../../gym/aggregateMetrics';
import { aggregateMetrics070Schema } from '../../gym/aggregateMetrics070';
import { entryValues070 } from '../../gym/aggregateMetrics070Entry';
import { AggregateMetricsWriter, type EntryValues } from '../../gym/aggregateMetricsFile';
import { parseKinded, type KindedJson } from '../../gym/kindedJson';
import type { PyValue } from '../../gym/pythonJson';
import { postJsonText, RequestFailure } from '../http/client';
import { mergedDigestsPath } from '../chunk/chunkIndex';
import { agentDirectory } from '../run/servers';
import type { Fence } from '../chunk/fence';
import { appendCountedAsZero, type CountAsZero } from './countedAsZero';
import { entriesByAgent, entriesOfDigests, entriesOfRollouts, type EntryGroup } from './aggregateMetricsEntries';
import { entryNaming, type EntryNaming } from './aggregateMetricsNaming';

// `<stem>_aggregate_metrics.json` beside the merged rollouts, as ng_collect_rollouts writes it after
// collecting (rollout_collection.py RolloutCollectionHelper._call_aggregate_metrics): the completed
// rollouts sorted by key, grouped (by agent, or by environment server: aggregateMetricsNaming.ts),
// each group stripped and posted to its agent's POST /aggregate_metrics, one entry per group. The
// stripped rollouts are the merge's digests (activities/chunk/shardLines.ts), 0.7.0's entries, read
// a group's at a time by aggregateMetricsEntries.ts, so nothing here decodes a trajectory; 0.4.0's
// entries hold less of `response` and are made from them. Digests of an older pipeline version, which kept less, are never
// read: a run begun under it is refused on resume (gym/runManifest.ts PIPELINE_VERSION).

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

/**
 * The agent's answer as entry values, with the number kinds of its bytes (NeMo Gym writes them back
 * with orjson); with `environmentServer`, as NeMo Gym 0.7.0 writes it, under that server's name.
 */
export async function askAgent(
  name: string,
  baseUrl: string,
  lines: () => AsyncIterable<string>,
  timeoutMs: number,
  environmentServer?: string,
): Promise<EntryValues> {
  const url = new URL('/aggregate_metrics', baseUrl).toString();
  let raw: KindedJson;
  try {
    raw = (await postJsonText(url, () => requestBody(lines()), {
      timeoutMs,
      connections: 1,
      parse: parseKinded,
    })) as KindedJson;
  } catch (err) {
    // A refusal (4xx) will not change on retry; NeMo Gym's collection fails on it too (raise_for_status).
    if (err instanceof RequestFailure && !err.retryable && err.failureClass !== 'cancelled') {
      throw new ConfigError(
        `agent "${name}" cannot aggregate metrics: ${err.message}; NeMo Gym agents answer POST /aggregate_metrics, which ng_collect_rollouts calls after collecting`,
      );
    }
    throw err;
  }
  const schema = environmentServer === undefined ? aggregateMetricsSchema : aggregateMetrics070Schema;
  const parsed = schema.safeParse(raw.plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RequestFailure(
      'invalid_response',
      `${url} answered something that is not AggregateMetrics: ${issue?.path.join('.')}: ${issue?.message}`,
      true,
    );
  }
  const values = entryValues(parsed.data, raw.kinded);
  if (environmentServer === undefined) return values;
  const { repeat_level_metrics: plainRepeats, perf_summary: plainPerf } = parsed.data as z.infer<
    typeof aggregateMetrics070Schema
  >;
  const kinded = raw.kinded instanceof Map ? raw.kinded : undefined;
  const repeats = (kinded?.get('repeat_level_metrics') as PyValue[] | undefined) ?? plainRepeats;
  const perfSummary = (kinded?.get('perf_summary') as PyValue | undefined) ?? plainPerf;
  const gym070 = { environmentServer, repeats: repeats as PyValue[] };
  return { ...values, gym070: perfSummary == null ? gym070 : { ...gym070, perfSummary: perfSummary as PyValue } };
}

/** Fields the schema defaulted stay defaulted; present ones are taken with their kinds. */
function entryValues(metrics: AggregateMetrics, kinded: unknown): EntryValues {
  const plainValues: EntryValues = {
    agentMetrics: metrics.agent_metrics,
    keyMetrics: metrics.key_metrics,
    groups: metrics.group_level_metrics,
  };
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
  const name = lp.agent_name ?? pivotAgentName(plan);
  return () => name;
}

/**
 * How a group's entry values are had: asked of the agent server that ran its rollouts, or, for
 * rollouts run in-process, computed here, read with the Python types of the lines' numbers so the
 * file has NeMo Gym's bytes.
 */
async function entryValuesOf(
  input: AggregateMetricsInput,
  serving: ((rowAgent: string) => string) | undefined,
): Promise<(agent: string, lines: () => AsyncIterable<string>, environmentServer?: string) => Promise<EntryValues>> {
  const agents = serving && (await agentDirectory(input.plan));
  if (!serving || !agents)
    return async (_agent, lines, environmentServer) =>
      environmentServer === undefined ? typedAggregateMetrics(lines) : entryValues070(lines, environmentServer);
  const timeoutMs = stageSettings(input.plan, input.stage).requestTimeoutMs;
  const gym070 = followsGym070(input.plan);
  return async (agent, lines, environmentServer) => {
    const server = serving(agent);
    const baseUrl = agents.get(server);
    if (!baseUrl)
      throw new ConfigError(
        `${input.rolloutsPath}: agent "${server}" is no longer served, so its metrics cannot be aggregated`,
      );
    const sent = gym070 ? lines : () => mapLines(lines(), entryFor040);
    return askAgent(server, baseUrl, sent, timeoutMs, environmentServer);
  };
}

/**
 * Writes the aggregate metrics of a merged stage and returns the path, or nothing when no rollout
 * completed (upstream writes no file then). Rollouts an agent server ran are aggregated by that
 * agent; in-process ones get what a NeMo Gym pivot agent answers by default, the same computation
 * the embedded resources server runs. Entries are named as upstream's are (aggregateMetricsNaming.ts).
 */
export async function writeAggregateMetrics(
  input: AggregateMetricsInput,
  publishing: Fence,
): Promise<string | undefined> {
  const outPrefix = input.rolloutsPath.replace(/\.jsonl$/, '');
  const naming = await entryNaming(input.plan, input.stage, followsGym070(input.plan));
  const digestsPath = await mergedDigestsPath(outPrefix);
  const entries = digestsPath && (await entriesOfDigests(digestsPath, naming.groupOf));
  const counting = countAsZero(input);
  if (digestsPath && entries && !counting) return writeEntries(input, digestsPath, entries, naming, publishing);
  const made = digestsPath && entries ? undefined : await entriesOfRollouts(input.rolloutsPath);
  const withCounted = counting ? `${input.rolloutsPath}.counted-${process.pid}-${Date.now()}.tmp` : undefined;
  try {
    const entriesPath = made ?? digestsPath!;
    if (counting && withCounted) {
      const counted = await appendCountedAsZero(outPrefix, entriesPath, withCounted, counting, naming.groupOf);
      // 0.7.0 prints these two lines as it aggregates.
      if (counting.failureClasses.length > 0)
        log.info(`Counting ${counted.failures} failure row(s) as scored zeros: ${counting.failureClasses.join(', ')}`);
      if (counting.missing) log.info(`Counting ${counted.imputed} materialized rollout(s) with no row as scored zeros`);
    }
    const scoredPath = withCounted ?? entriesPath;
    const groups = await entriesByAgent(scoredPath, naming.groupOf);
    return await writeEntries(input, scoredPath, groups, naming, publishing);
  } finally {
    for (const file of [made, withCounted]) if (file) await rm(file, { force: true });
  }
}

async function* mapLines(lines: AsyncIterable<string>, map: (line: string) => string): AsyncGenerator<string> {
  for await (const line of lines) yield map(line);
}

/** The collect stage's 0.7.0 denominator options, or undefined when neither is set. */
function countAsZero({ plan, stage }: AggregateMetricsInput): CountAsZero | undefined {
  if (stage !== 'collect') return undefined;
  const failureClasses = plan.config.collect.count_failure_classes_as_zero ?? [];
  const missing = plan.config.collect.count_missing_rollouts_as_zero === true;
  return failureClasses.length > 0 || missing ? { failureClasses, missing } : undefined;
}

interface AggregateMetricsInput {
  plan: RunPlan;
  stage: RolloutStage;
  rolloutsPath: string;
}

/** Whether a stage writes 0.7.0's entries; the same key chooses whose reward profile files it writes. */
function followsGym070(plan: RunPlan): boolean {
  return (plan.config.profile.nemo_gym_version ?? '0.7.0') === '0.7.0';
}

async function writeEntries(
  input: AggregateMetricsInput,
  entriesPath: string,
  groups: Map<string, EntryGroup>,
  naming: EntryNaming,
  fence: Fence,
): Promise<string | undefined> {
  if (groups.size === 0) return undefined;
  const serving = servingAgent(input.plan, input.stage);
  const valuesOf = await entryValuesOf(input, serving);
  const names = naming.names(groups, serving ?? ((agent) => agent));
  const out = aggregateMetricsPath(input.rolloutsPath);
  // A name of this attempt's own, published by a fenced rename: a re-run finish and an older one
  // still running never write the same file (docs/fencing.md).
  const tmp = `${out}.${fence.token.name}.tmp`;
  const file = await open(entriesPath, 'r');
  const writer = await open(tmp, 'w');
  const entries = new AggregateMetricsWriter(writer, tmp);
  let written = 0;
  const beat = setInterval(() => heartbeat({ aggregateMetrics: written }), 5000);
  try {
    for (const [group, { agent, lines }] of groups) {
      const { label, environmentServer } = names.get(group)!;
      await entries.entry(label, await valuesOf(agent, () => lines(file), environmentServer));
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
