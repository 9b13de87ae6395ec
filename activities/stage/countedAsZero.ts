import { readLines, JsonlWriter } from '../../gym/jsonl';
import { parseKinded, toPy } from '../../gym/kindedJson';
import type { PyDict, PyValue } from '../../gym/pythonJson';
import { stripForAggregateMetrics } from '../../gym/aggregateMetrics';
import { ENVIRONMENT_SERVER_STAMP } from '../../gym/runLabels';
import type { GroupOf } from './aggregateMetricsEntries';
import { materializedInputsPath, mergedPaths } from '../chunk/chunkIndex';

// NeMo Gym 0.7.0's denominator options (rollout_collection.py `_failure_rows_counted_as_zero`,
// `_missing_rollout_rows_counted_as_zero`, `_fill_task_fields`): a failed rollout of a class the
// user names (`count_failure_classes_as_zero`), and a materialized rollout that left no row at all
// (`count_missing_rollouts_as_zero`), enter the `/aggregate_metrics` request, so the score is over
// the rollouts owed rather than over those that happened to land. Only the metric input changes,
// never a rollout artifact.

export interface CountAsZero {
  failureClasses: readonly string[];
  missing: boolean;
}

/** How many rows each option added to the metric input. */
export interface Counted {
  failures: number;
  imputed: number;
}

const key = (task: unknown, rollout: unknown) => `${String(task)}:${String(rollout)}`;

interface Scored {
  keys: Set<string>;
  /** Each group's top-level keys over its entries: the only task fields an added row may take. */
  carried: Map<string, Set<string>>;
}

/** The group a row's metrics go to (`groupOf`, else its agent), which `_fill_task_fields` reads task fields by. */
function groupOfRow(agent: unknown, stamp: unknown, groupOf: GroupOf | undefined): string {
  if (groupOf === undefined || typeof agent !== 'string' || agent === '') return String(agent);
  return groupOf(agent, typeof stamp === 'string' ? stamp : undefined);
}

/** What the entries already score, copying each line to `writer`. */
async function copyEntries(entriesPath: string, writer: JsonlWriter, groupOf: GroupOf | undefined): Promise<Scored> {
  const scored: Scored = { keys: new Set(), carried: new Map() };
  for await (const { text } of readLines(entriesPath)) {
    if (text === '') continue;
    const row = JSON.parse(text) as Record<string, unknown> & { agent_ref?: { name?: unknown } };
    scored.keys.add(key(row._ng_task_index, row._ng_rollout_index));
    const group = groupOfRow(row.agent_ref?.name, row[ENVIRONMENT_SERVER_STAMP], groupOf);
    let keys = scored.carried.get(group);
    if (!keys) scored.carried.set(group, (keys = new Set()));
    for (const k of Object.keys(row)) keys.add(k);
    await writer.writeLine(`${text}\n`);
  }
  return scored;
}

/** The last attempt's line of each rollout in the failures sidecar (the one that stands), by key. */
async function latestFailures(failuresPath: string): Promise<Map<string, string>> {
  const latest = new Map<string, string>();
  try {
    for await (const { text } of readLines(failuresPath)) {
      if (text === '') continue;
      const row = JSON.parse(text) as Record<string, unknown>;
      latest.set(key(row._ng_task_index, row._ng_rollout_index), text);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return latest;
}

/**
 * Diagnostics that stay in the sidecar: 0.7.0's `_ng_failure_*` and failure kind and reason, and
 * the attempt, class and error pivot-miner writes after each failed attempt (its aggregator would
 * average the attempt number as a metric).
 */
function isDiagnostic(k: string): boolean {
  return (
    k.startsWith('_ng_failure_') || ['failure_kind', 'failure_reason', 'attempt', 'failure_class', 'error'].includes(k)
  );
}

/** The metric-input copy of a sidecar row counted: unmasked, a zero reward unless it carries one. */
function countedFailure(text: string): PyDict {
  const row = toPy(parseKinded(text).kinded) as PyDict;
  const scored: PyDict = new Map([...row].filter(([k]) => !isDiagnostic(k)));
  scored.set('mask_sample', false);
  if (!scored.has('reward')) scored.set('reward', 0.0);
  return scored;
}

/** The zero of a materialized rollout that left no row: its keys, its agent, a float zero reward, its row's environment server stamp. */
function zeroOf(row: PyDict): PyDict {
  const zero = new Map<string, PyValue>([
    ['_ng_task_index', row.get('_ng_task_index') ?? null],
    ['_ng_rollout_index', row.get('_ng_rollout_index') ?? null],
    ['agent_ref', row.get('agent_ref') ?? null],
    ['reward', 0.0],
  ]);
  if (row.has(ENVIRONMENT_SERVER_STAMP)) zero.set(ENVIRONMENT_SERVER_STAMP, row.get(ENVIRONMENT_SERVER_STAMP)!);
  return zero;
}

/**
 * The task fields of `row` its agent's real rows carry too, set where `added` has none. 0.7.0 adds
 * them in a set's order, which can vary between its runs when there are several; here they keep
 * the materialized row's order.
 */
function fillTaskFields(added: PyDict, row: PyDict, carried: Set<string> | undefined): PyDict {
  for (const [k, v] of row) {
    if (!carried?.has(k) || k.startsWith('_') || k === 'responses_create_params' || k === 'response') continue;
    if (!added.has(k)) added.set(k, v);
  }
  return added;
}

function agentOf(row: PyDict): string | undefined {
  const ref = row.get('agent_ref');
  const name = ref instanceof Map ? ref.get('name') : undefined;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The entries file of the stage `outPrefix` with the rows `options` count appended, stripped as
 * every entry is; resolves to how many each option added. The appended lines are out of key order,
 * which aggregateMetricsEntries.ts sorts by, as 0.7.0 sorts its metric input.
 */
export async function appendCountedAsZero(
  outPrefix: string,
  entriesPath: string,
  outPath: string,
  options: CountAsZero,
  groupOf?: GroupOf,
): Promise<Counted> {
  const writer = await JsonlWriter.open(outPath);
  const counted: Counted = { failures: 0, imputed: 0 };
  try {
    const scored = await copyEntries(entriesPath, writer, groupOf);
    const failures = await latestFailures(mergedPaths(outPrefix).failuresPath);
    const wanted = new Set(options.failureClasses);
    const countedFailures = new Map<string, PyDict>();
    for (const [k, text] of failures) {
      const failureClass = (JSON.parse(text) as Record<string, unknown>)._ng_failure_class;
      if (!scored.keys.has(k) && typeof failureClass === 'string' && wanted.has(failureClass))
        countedFailures.set(k, countedFailure(text));
    }
    for await (const { text } of readLines(materializedInputsPath(outPrefix))) {
      if (text === '') continue;
      const row = toPy(parseKinded(text).kinded) as PyDict;
      const k = key(row.get('_ng_task_index'), row.get('_ng_rollout_index'));
      const failure = countedFailures.get(k);
      // 0.7.0 warns about a row that names no agent and leaves it out; every materialized row names one here.
      const agent = agentOf(row);
      let added: PyDict | undefined;
      if (failure) {
        added = failure;
        counted.failures++;
      } else if (options.missing && agent !== undefined && !scored.keys.has(k) && !failures.has(k)) {
        added = zeroOf(row);
        counted.imputed++;
      }
      if (!added) continue;
      const group = groupOfRow(agent, row.get(ENVIRONMENT_SERVER_STAMP), groupOf);
      await writer.write(stripForAggregateMetrics(fillTaskFields(added, row, scored.carried.get(group))));
    }
  } finally {
    await writer.close();
  }
  return counted;
}
