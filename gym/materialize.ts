import { createHash } from 'node:crypto';
import { z } from 'zod';
import { jsonText, type JsonlRecord } from './jsonl';
import { JsonlError } from './errors';
import { dictGet, dictSet, isJsonDict, kindedFrom, shallowCopyDict, withEntries, type JsonDict } from './kindedJson';
import { decodePythonJson, PythonJsonFailure } from './pythonJson';
import { pythonJsonDumps } from './pythonJsonDumps';
import { RepeatLines } from './repeatLines';
import { taskRowSchema, type MaterializedRow } from './schemas';
import { agentMapSchema, fanOutSchema, numRepeatsSchema, routeRow, type Dispatch, type RowRoute } from './agentRouting';
import { isMaterializedTaskRow, materializedTaskRowRefusal } from './environmentRouting';

// Materialization as NeMo Gym's rollout collection (`RolloutCollectionHelper._preprocess_rows_from_config`)
// does it, so a materialized inputs file made here is interchangeable with one from `ng_collect_rollouts`
// and the reward profiler keys results to tasks the same way.

export const materializeOptionsSchema = z.object({
  // 0.4.0's: fills rows without agent_ref only. 0.7.0's agent_name is agent_map._default (gym/agentRouting.ts).
  agent_name: z.string().min(1).optional(),
  agent_map: agentMapSchema.optional(),
  fan_out: fanOutSchema.optional(),
  num_repeats: numRepeatsSchema.default(1),
  // 0.7.0's environment_routing_mode legacy, with the agent its relay names in the head's config.
  legacy_environment_server: z.object({ name: z.string().min(1), agent: z.string().min(1) }).optional(),
  responses_create_params: z.record(z.string(), z.unknown()).default({}),
  seed_per_repeat: z.boolean().default(false),
  // Upstream treats `limit: 0` as "no limit" (a falsy check); rejecting it avoids that surprise.
  limit: z.number().int().min(1).optional(),
});
export type MaterializeOptions = z.infer<typeof materializeOptionsSchema>;

type Row = Record<string, unknown>;

/** A materialized row: `row` to read fields from, `value` to write (`row` itself unless the input
 * line had number kinds JSON.parse loses), its line as NeMo Gym writes it (`orjson.dumps(value)`,
 * without the newline), and the input line it came from. */
export interface MaterializedRecord {
  row: MaterializedRow;
  value: JsonDict;
  text: string;
  line: number;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'row';
  return `${where}: ${issue.message}`;
}

/**
 * Upstream keys duplicate detection on the raw line string. We key on the line text without its
 * terminator (hashed, so a million distinct rows cost a few MB), which differs from upstream only for
 * an unterminated last line repeating an earlier line: upstream gives it a new task, we do not.
 */
function lineText(record: JsonlRecord): string {
  return record.text ?? JSON.stringify(record.value);
}

function lineKey(record: JsonlRecord): string {
  return createHash('sha256').update(lineText(record)).digest('base64');
}

/**
 * Upstream parses `extra_body` (default "{}"), sets `seed`, and writes it back with Python's
 * `json.dumps`. `row` is a repeat's own top level; the objects on the way to `extra_body` are
 * copied before they are changed, since the repeats of a row share everything else.
 */
function withSeed(row: JsonDict, seed: number, file: string, line: number): void {
  const params = shallowCopyDict(dictGet(row, 'responses_create_params') as JsonDict);
  dictSet(row, 'responses_create_params', params);
  const existing = dictGet(params, 'metadata');
  if (existing !== undefined && !isJsonDict(existing)) {
    throw new JsonlError(file, line, 'responses_create_params.metadata must be an object to carry a per-repeat seed');
  }
  const metadata = existing === undefined ? {} : shallowCopyDict(existing);
  dictSet(params, 'metadata', metadata);
  const own = dictGet(params, 'metadata') as JsonDict;
  const encoded = dictGet(own, 'extra_body');
  // Decoded as Python's json.loads does, so a `1.0` in it and its key order survive the round trip.
  const extraBody = decodePythonJson(typeof encoded === 'string' ? encoded : '{}');
  if (extraBody instanceof PythonJsonFailure) {
    throw new JsonlError(file, line, 'responses_create_params.metadata.extra_body is not a JSON string');
  }
  if (!(extraBody instanceof Map)) {
    throw new JsonlError(file, line, 'responses_create_params.metadata.extra_body must encode a JSON object');
  }
  extraBody.set('seed', BigInt(seed));
  dictSet(own, 'extra_body', pythonJsonDumps(extraBody));
}

/** The `extra_body` a repeat's seed was written into. */
function extraBodyOf(row: JsonDict): string {
  const params = dictGet(row, 'responses_create_params') as JsonDict;
  return dictGet(dictGet(params, 'metadata') as JsonDict, 'extra_body') as string;
}

/** Agent, overrides, task index and environment server as upstream gives them to a row, on a copy of `row` of its kind. */
function prepared(row: JsonDict, opts: MaterializeOptions, route: RowRoute, taskIndex: number): JsonDict {
  const params = withEntries(dictGet(row, 'responses_create_params') as JsonDict, opts.responses_create_params);
  return withEntries(row, {
    ...(route.agentRef === undefined ? {} : { agent_ref: route.agentRef }),
    responses_create_params: params,
    _ng_task_index: taskIndex,
    ...(route.environmentServer === undefined ? {} : { _ng_environment_server: route.environmentServer }),
  });
}

/** The prepared row as a copy dispatched to `agent` starts: `{name: agent}` set when the row names another (fan-out). */
function dispatched(row: JsonDict, agent: string): JsonDict {
  const ref = dictGet(row, 'agent_ref');
  const name = isJsonDict(ref) ? dictGet(ref, 'name') : undefined;
  return name === agent ? row : withEntries(row, { agent_ref: { name: agent } });
}

/** The input line a row came from, and the `agent_ref` its repeats get last (legacy routing). */
interface RowPlace {
  file: string;
  line: number;
  lateAgentRef?: { name: string };
}

/**
 * Repeat `rolloutIndex` of a prepared row. Repeats share what none of them changes (rows are only
 * read and written once materialized), and a deep copy of every repeat cost more than the rest of
 * materializing together; what a repeat sets is copied first.
 */
function repeated(row: JsonDict, rolloutIndex: number, opts: MaterializeOptions, where: RowPlace): JsonDict {
  const copy = shallowCopyDict(row);
  dictSet(copy, '_ng_rollout_index', rolloutIndex);
  // Upstream stamps a legacy-routed row's agent on the repeats it has made, so after their index.
  if (where.lateAgentRef) dictSet(copy, 'agent_ref', where.lateAgentRef);
  if (opts.seed_per_repeat) withSeed(copy, rolloutIndex, where.file, where.line);
  return copy;
}

/**
 * Expands task rows into materialized rows, abc → aabbcc. Semantics follow upstream exactly:
 * - agents as gym/agentRouting.ts routes them: with `agent_map` (0.7.0) a mapped row's `agent_ref`
 *   becomes `{"name": agent}` in place; without it (0.4.0) a row without `agent_ref` gets
 *   `{"name": agent_name}`; either is appended last when the row had none (upstream adds no `type`);
 * - a fan-out copy to another agent gets `{"name": agent}`, after `_ng_task_index` if the row had no
 *   `agent_ref`, and its repeats continue the task's rollout indices;
 * - with `legacy_environment_server` (0.7.0's legacy routing) no row is re-routed: `_ng_environment_server`
 *   follows `_ng_task_index`, and a row without `agent_ref` gets the relay's agent after `_ng_rollout_index`;
 * - a materialized taskset row (`task_id` + `task_input`) is refused (gym/environmentRouting.ts);
 * - overrides are shallow-merged over `responses_create_params`, keeping its key order;
 * - `_ng_task_index` is kept when the row has one; otherwise identical lines share the index of their
 *   first occurrence, counting distinct unindexed lines from 0 (upstream does not skip indices rows
 *   brought themselves, so mixing both can collide, as it does in NeMo Gym);
 * - `_ng_rollout_index` counts per task across the whole file, so a duplicate line continues its
 *   task's rollout indices (a line seen twice with num_repeats 2 yields rollouts 0..3 of one task);
 * - the seed is the rollout index, hence unique within a task even across duplicate lines;
 * - `limit` counts input rows, and rows past it are never read or validated;
 * - numbers keep the kind their lexeme gives them, as upstream's orjson round trip keeps them.
 */
export async function* materializeRows(
  rows: AsyncIterable<JsonlRecord> | Iterable<JsonlRecord>,
  opts: MaterializeOptions,
  file: string,
): AsyncGenerator<MaterializedRow> {
  for await (const { row } of materializeRecords(rows, opts, file)) yield row;
}

/**
 * `materializeRows` with the value to write and the input line each row came from, so a later check
 * can name it; `onRoute` sees each row's route (gym/routingWarnings.ts gathers 0.7.0's warnings from them).
 */
export async function* materializeRecords(
  rows: AsyncIterable<JsonlRecord> | Iterable<JsonlRecord>,
  opts: MaterializeOptions,
  file: string,
  onRoute: (route: RowRoute) => void = () => undefined,
): AsyncGenerator<MaterializedRecord> {
  const options = materializeOptionsSchema.parse(opts);
  const taskIndexByLine = new Map<string, number>();
  const nextRolloutIndex = new Map<number, number>();
  let taken = 0;
  for await (const record of rows) {
    if (options.limit !== undefined && taken >= options.limit) break;
    taken++;
    if (isMaterializedTaskRow(record.value))
      throw new JsonlError(file, record.line, materializedTaskRowRefusal(record.value));
    const check = taskRowSchema.safeParse(record.value);
    if (!check.success) {
      throw new JsonlError(file, record.line, `not a task row: ${check.error.issues.map(describeIssue).join('; ')}`);
    }
    // Validation only: the parsed copy may reorder keys, and rows must pass through byte for byte.
    const value = record.value as Row;
    let taskIndex = value._ng_task_index as number | undefined;
    if (taskIndex === undefined) {
      const key = lineKey(record);
      taskIndex = taskIndexByLine.get(key);
      if (taskIndex === undefined) {
        taskIndex = taskIndexByLine.size;
        taskIndexByLine.set(key, taskIndex);
      }
    }
    const route = routeRow(value, options, file, record.line);
    onRoute(route);
    const kinded = kindedFrom(lineText(record), value) as JsonDict;
    const row = prepared(value, options, route, taskIndex);
    const kindedRow = kinded === value ? row : prepared(kinded, options, route, taskIndex);
    const where = { file, line: record.line, lateAgentRef: route.lateAgentRef };
    for (const dispatch of route.dispatches) {
      // A row filled late names no agent yet, and is not re-routed.
      const toAgent = (r: JsonDict) => (route.lateAgentRef ? r : dispatched(r, dispatch.agent));
      const copy = toAgent(row);
      const copies = { row: copy, kindedRow: kindedRow === row ? copy : toAgent(kindedRow) };
      yield* repeats(copies, dispatch, options, nextRolloutIndex, where);
    }
  }
}

/** The repeats of one dispatched copy of a row, continuing its task's rollout indices. */
function* repeats(
  copies: { row: JsonDict; kindedRow: JsonDict },
  dispatch: Dispatch,
  options: MaterializeOptions,
  nextRolloutIndex: Map<number, number>,
  where: RowPlace,
): Generator<MaterializedRecord> {
  const { row, kindedRow } = copies;
  const taskIndex = dictGet(row, '_ng_task_index') as number;
  let lines: RepeatLines | undefined;
  for (let repeat = 0; repeat < dispatch.repeats; repeat++) {
    const rolloutIndex = nextRolloutIndex.get(taskIndex) ?? 0;
    nextRolloutIndex.set(taskIndex, rolloutIndex + 1);
    const copy = repeated(row, rolloutIndex, options, where);
    const kindedCopy = kindedRow === row ? copy : repeated(kindedRow, rolloutIndex, options, where);
    // Made from the first repeat, once it has passed the checks repeating makes.
    if (repeat === 0 && dispatch.repeats > 1) lines = RepeatLines.of(kindedCopy, options.seed_per_repeat);
    const text = lines
      ? lines.line(rolloutIndex, options.seed_per_repeat ? extraBodyOf(kindedCopy) : undefined)
      : jsonText(kindedCopy);
    yield { row: copy as MaterializedRow, value: kindedCopy, text, line: where.line };
  }
}
