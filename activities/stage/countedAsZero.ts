import { readLines, JsonlWriter } from '../../gym/jsonl';
import { parseKinded, toPy } from '../../gym/kindedJson';
import type { PyDict, PyValue } from '../../gym/pythonJson';
import { materializedInputsPath, mergedPaths } from '../chunk/chunkIndex';

// NeMo Gym 0.7.0's `count_missing_rollouts_as_zero` (rollout_collection.py
// `_missing_rollout_rows_counted_as_zero` and `_fill_task_fields`): a materialized rollout that left
// no row, in the rollouts file or the failures sidecar, enters the `/aggregate_metrics` request as a
// zero, so the score is over every rollout owed rather than over those that happened to land. Only
// the metric input changes, never a rollout artifact.

const key = (task: unknown, rollout: unknown) => `${String(task)}:${String(rollout)}`;

interface Scored {
  keys: Set<string>;
  /** Each agent's top-level keys over its entries: the only task fields a zero may carry. */
  carried: Map<string, Set<string>>;
}

/** What the entries already score, copying each line to `writer`. */
async function copyEntries(entriesPath: string, writer: JsonlWriter): Promise<Scored> {
  const scored: Scored = { keys: new Set(), carried: new Map() };
  for await (const { text } of readLines(entriesPath)) {
    if (text === '') continue;
    const row = JSON.parse(text) as Record<string, unknown> & { agent_ref?: { name?: unknown } };
    scored.keys.add(key(row._ng_task_index, row._ng_rollout_index));
    const agent = String(row.agent_ref?.name);
    let keys = scored.carried.get(agent);
    if (!keys) scored.carried.set(agent, (keys = new Set()));
    for (const k of Object.keys(row)) keys.add(k);
    await writer.writeLine(`${text}\n`);
  }
  return scored;
}

/** The keys the failures sidecar holds a row for, whatever its class: those are never imputed. */
async function recordedFailures(failuresPath: string): Promise<Set<string>> {
  const keys = new Set<string>();
  try {
    for await (const { text } of readLines(failuresPath)) {
      if (text === '') continue;
      const row = JSON.parse(text) as Record<string, unknown>;
      keys.add(key(row._ng_task_index, row._ng_rollout_index));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return keys;
}

/**
 * The zero of one materialized row: its keys, agent and a float zero reward, then the task fields
 * its agent's real rows carry too, taken from the row (0.7.0 adds them in a set's order, which
 * varies between its runs when there are several; here they keep the row's order).
 */
function zeroOf(row: PyDict, carried: Set<string> | undefined): PyDict {
  const zero: PyDict = new Map<string, PyValue>([
    ['_ng_task_index', row.get('_ng_task_index') ?? null],
    ['_ng_rollout_index', row.get('_ng_rollout_index') ?? null],
    ['agent_ref', row.get('agent_ref') ?? null],
    ['reward', 0.0],
  ]);
  for (const [k, v] of row) {
    if (!carried?.has(k) || k.startsWith('_') || k === 'responses_create_params' || k === 'response') continue;
    if (!zero.has(k)) zero.set(k, v);
  }
  return zero;
}

/**
 * The entries file with a zero appended for each materialized rollout of the stage `outPrefix` that
 * left no row; resolves to how many were added. The appended lines are out of key order, which
 * aggregateMetricsEntries.ts sorts by, as 0.7.0 sorts its metric input.
 */
export async function appendMissingAsZero(outPrefix: string, entriesPath: string, outPath: string): Promise<number> {
  const writer = await JsonlWriter.open(outPath);
  let imputed = 0;
  try {
    const scored = await copyEntries(entriesPath, writer);
    const failed = await recordedFailures(mergedPaths(outPrefix).failuresPath);
    for await (const { text } of readLines(materializedInputsPath(outPrefix))) {
      if (text === '') continue;
      const row = toPy(parseKinded(text).kinded) as PyDict;
      const k = key(row.get('_ng_task_index'), row.get('_ng_rollout_index'));
      if (scored.keys.has(k) || failed.has(k)) continue;
      const ref = row.get('agent_ref');
      const agent = ref instanceof Map ? ref.get('name') : undefined;
      // 0.7.0 warns about a row that names no agent and leaves it out; every materialized row names one here.
      if (typeof agent !== 'string') continue;
      scored.keys.add(k);
      await writer.write(zeroOf(row, scored.carried.get(agent)));
      imputed++;
    }
  } finally {
    await writer.close();
  }
  return imputed;
}
